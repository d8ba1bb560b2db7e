package gitrepo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// childEnv makes the test binary another server process: it does what the
// childSpec in the variable says, prints the outcome and exits, or waits
// to be killed.
const childEnv = "GITREPO_TEST_CHILD"

// childSpec is what the child process does: hold the lock file HoldLock
// until killed, or open a workspace of Repository on Branch in Dir (over
// http with the credentials User and Pass, if set) and, with Publish, add a
// file and publish it.
type childSpec struct {
	HoldLock                string
	Dir, Repository, Branch string
	User, Pass              string
	Publish                 bool
}

// runChild is the child process's part; it returns the exit code.
func runChild(spec string) int {
	var c childSpec
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ctx := context.Background()
	if c.HoldLock != "" {
		if _, err := rundir.Acquire(ctx, c.HoldLock); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("locked")
		select {} // until killed
	}
	cfg := Config{Dir: c.Dir}
	if c.User != "" {
		cfg.Credentials = func(context.Context, string) (string, string, error) { return c.User, c.Pass, nil }
	}
	r, err := New(cfg)
	if err == nil {
		var ws engine.Workspace
		ws, err = r.Open(ctx, engine.RepoSpec{Repository: c.Repository, Ref: "main", Branch: c.Branch})
		if err == nil {
			defer ws.Close()
			if c.Publish {
				if err = os.WriteFile(filepath.Join(ws.Dir(), "n.md"), []byte("child\n"), 0o644); err == nil {
					_, err = ws.Publish(ctx, "child")
				}
			}
		}
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// child is a running child process.
type child struct {
	cmd  *exec.Cmd
	out  logBuffer     // what it printed
	done chan struct{} // closed once it ended
}

// startChild starts the test binary as a child doing spec; it is killed
// when the test ends, if still running.
func startChild(t *testing.T, spec childSpec) *child {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() { c.kill(t) })
	return c
}

// line waits for the child's first line, failing if it ends without one.
func (c *child) line(t *testing.T) string {
	t.Helper()
	c.waitFor(t, func() bool { return strings.Contains(c.out.String(), "\n") })
	first, _, _ := strings.Cut(c.out.String(), "\n")
	return first
}

// wait waits for the child to end and returns all it printed.
func (c *child) wait(t *testing.T) string {
	t.Helper()
	<-c.done
	return strings.TrimSpace(c.out.String())
}

// kill kills the child with SIGKILL, as an operator's kill -9 or the OOM
// killer would, and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Kill()
	<-c.done
}

// waitFor waits until cond holds, failing the test, with what the child
// printed, if the child ends first.
func (c *child) waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitFor(t, func() bool {
		select {
		case <-c.done:
			if !cond() {
				t.Fatalf("the child ended: %s", c.out.String())
			}
		default:
		}
		return cond()
	})
}

// waitFor waits until cond holds. The limit only keeps a broken test from
// hanging; nothing is asserted about the time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("gave up waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
