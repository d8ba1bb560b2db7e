//go:build linux

package sandbox

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBridgeExitStatus(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"success", []string{"--", "/bin/sh", "-c", "exit 0"}, 0},
		{"a status", []string{"--", "/bin/sh", "-c", "exit 3"}, 3},
		{"a signal", []string{"--", "/bin/sh", "-c", "kill -9 $$"}, 128 + 9},
		{"a missing program", []string{"--", "/nonexistent/agent"}, 127},
		{"a program that cannot run", []string{"--", notExec}, 126},
		{"no program", []string{}, 125},
		{"an unknown flag", []string{"-x", "--", "/bin/true"}, 125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-listen", "127.0.0.1:0", "-socket", "/nonexistent.sock"}, tt.args...)
			if got := BridgeMain(args); got != tt.want {
				t.Errorf("BridgeMain(%q) = %d, want %d", args, got, tt.want)
			}
		})
	}
}

// TestBridgeForwards runs the bridge outside a sandbox: its child connects
// to the bridge's TCP address and reaches a server on the Unix socket.
func TestBridgeForwards(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "proxy.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	// A free port: the bridge must listen where its child is told.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	t.Setenv("GORACE", "atexit_sleep_ms=0") // the child is this binary
	if got := BridgeMain([]string{"-listen", addr, "-socket", sock, "--", exe, "test-echo", addr, out}); got != 0 {
		t.Fatalf("BridgeMain = %d", got)
	}
	data, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(data), "ping from ") {
		t.Errorf("the child got %q, %v", data, err)
	}
}
