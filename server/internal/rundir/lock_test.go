package rundir

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// lockChildEnv makes the test binary a process that takes the lock at the
// path it names, says so, and waits to be killed.
const lockChildEnv = "RUNDIR_TEST_CHILD_LOCK"

func holdLock(path string) {
	if _, err := Acquire(context.Background(), path); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	select {} // until killed
}

// cancelled is a context that has ended: Acquire tries once, then gives up.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestAcquireExcludesWithinAProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.lock")
	first, err := Acquire(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := Acquire(cancelled(), path); !errors.Is(err, context.Canceled) {
		if l != nil {
			l.Release()
		}
		t.Fatalf("a second Acquire while the lock is held = %v, want context.Canceled", err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := Acquire(context.Background(), path)
		if err == nil {
			err = l.Release()
		}
		done <- err
	}()
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("a second Release: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the lock file is gone: %v", err)
	}
}

// The lock excludes another process, and the kernel gives it back when that
// process is killed.
func TestAcquireExcludesAnotherProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	path := filepath.Join(t.TempDir(), "cache.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("the child said %q (%v)", line, err)
	}
	if l, err := Acquire(cancelled(), path); !errors.Is(err, context.Canceled) {
		if l != nil {
			l.Release()
		}
		t.Fatalf("Acquire while another process holds the lock = %v, want context.Canceled", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	l, err := Acquire(context.Background(), path)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	l.Release()
}
