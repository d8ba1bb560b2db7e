//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSandboxRefusesAnAllowedNameOfLoopback is DNS rebinding from inside a
// real sandbox: the allowed host's name leads to the server's own loopback
// interface, where a server listens. The agent (a bash script speaking
// CONNECT by hand, through the bridge) is answered 403, and the server
// sees no connection.
func TestSandboxRefusesAnAllowedNameOfLoopback(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	port, accepted := countingServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, Config{AllowHosts: []string{"localhost:" + port}, Bridge: []string{exe, "sandbox-bridge"}})
	dir, home, private := folders(t)
	script := `proxy=${HTTPS_PROXY#http://}
exec 3<>"/dev/tcp/${proxy%:*}/${proxy#*:}" || { echo "no proxy"; exit 1; }
printf 'CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n' "$1" "$1" >&3
while read -r line <&3; do echo "${line%$'\r'}"; done`
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	c, err := s.Command(context.Background(), Run{Program: bash, Args: []string{"-c", script, "agent", port},
		Env: []string{"GORACE=atexit_sleep_ms=0"}, Dir: dir, Home: home, Private: private, JobID: "job_9",
		Logger: newTextLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if !strings.HasPrefix(out.String(), "HTTP/1.1 403 ") || !strings.Contains(out.String(), "refuses") {
		t.Errorf("the agent got:\n%s\nwant 403", out.String())
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the server on the loopback interface got %d connections from the sandbox", n)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "job_id=job_9") || !strings.Contains(l, "loopback address") {
		t.Errorf("the refusal is not logged at Warn with the job:\n%s", l)
	}
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
