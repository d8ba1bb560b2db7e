//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// TestAllowedHostsThroughServe runs the whole path an agent's network
// traffic takes under serve: the agent, in its sandbox, has no network but
// the bridge (this very program, as "docsapi sandbox-bridge") on a
// loopback address of its own, which passes its connections to the proxy
// that serve runs; the proxy opens a tunnel to an allowed host only. The
// agent is a bash script speaking CONNECT by hand, and writes what it saw
// into the page it edits, so the pushed branch tells the story.
func TestAllowedHostsThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server")
	}
	requireSandbox(t)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello-from-the-allowed-host")
	}))
	defer allowed.Close()
	allowedPort := allowed.Listener.Addr().(*net.TCPAddr).Port
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otherPort := other.Addr().(*net.TCPAddr).Port

	work := t.TempDir()
	bin := buildDocsapi(ctx, t)
	bare := bareRepo(t, gitBin)
	agent := writeExecutable(t, filepath.Join(work, "agent.sh"), `#!/bin/bash
set -u
allowed=`+strconv.Itoa(allowedPort)+` other=`+strconv.Itoa(otherPort)+`
proxy=${HTTPS_PROXY#http://}
connect() { # port fd
  eval "exec $2<>/dev/tcp/${proxy%:*}/${proxy#*:}" || { echo "no-proxy" >> guide.md; return 1; }
  printf 'CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n' "$1" "$1" >&$2
  read -r status <&$2
  echo "connect $1: ${status%$'\r'}" | sed "s/ $1:/ port:/; s/port: .*\(20[0-9]\|40[0-9]\).*/port: \1/" >> guide.md
  while read -r line <&$2 && [ -n "${line%$'\r'}" ]; do :; done
}
connect "$allowed" 3 && {
  printf 'GET / HTTP/1.0\r\nHost: allowed\r\n\r\n' >&3
  tail -n 1 <&3 >> guide.md; echo >> guide.md
}
connect "$other" 4
if (exec 5<>/dev/tcp/127.0.0.1/$allowed) 2>/dev/null; then echo "direct: connected" >> guide.md; else echo "direct: refused" >> guide.md; fi
`)
	config := writeFile(t, filepath.Join(work, "docsapi.json"), fmt.Sprintf(`{
  "engine": {"pollInterval": "50ms", "maxAttempts": 1},
  "git": {"workDir": %q},
  "projects": [
    {"id": "handbook", "repository": %q, "ref": "main",
     "host": {"kind": "push-only"},
     "agent": {"kind": "command", "command": %q, "timeout": "1m",
               "sandbox": {"allowHosts": ["127.0.0.1:%d"], "allowAddresses": ["127.0.0.1"]}}}
  ]
}`, filepath.Join(work, "runs"), bare, agent, allowedPort))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "LANG=C.UTF-8", "DOCSAPI_DATA=" + filepath.Join(work, "data")}
	srv := startServe(ctx, t, bin, env, "serve", "--config", config, "--listen", "127.0.0.1:0", "--log-format", "json")
	defer srv.stop(t, 30*time.Second)

	keyCmd := exec.CommandContext(ctx, bin, "key", "create", "--project", "handbook", "--scope", "write", "--name", "net")
	keyCmd.Env = env
	var keyOut, keyErr bytes.Buffer
	keyCmd.Stdout, keyCmd.Stderr = &keyOut, &keyErr
	if err := keyCmd.Run(); err != nil {
		t.Fatalf("key create: %v\n%s", err, keyErr.String())
	}
	key := strings.TrimSpace(keyOut.String())
	base := "http://" + srv.addr + "/v2/agent/handbook/job"
	status, body := apiCall(ctx, t, http.MethodPost, base, key, `{"prompt": "Fetch the allowed host"}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the job: %d %s", status, body)
	}
	var job docsapi.Job
	if err := json.Unmarshal([]byte(body), &job); err != nil {
		t.Fatal(err)
	}
	for job.Status == docsapi.JobStatusActive {
		time.Sleep(50 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatalf("the job did not end:\n%s", srv.logs())
		}
		_, body = apiCall(ctx, t, http.MethodGet, base+"/"+job.ID, key, "")
		if err := json.Unmarshal([]byte(body), &job); err != nil {
			t.Fatal(err)
		}
	}
	if job.Status != docsapi.JobStatusCompleted {
		t.Fatalf("job %s:\n%s", job.Status, srv.logs())
	}
	got := gitOut(t, gitBin, bare, "show", "docs-agent/"+job.ID+":guide.md")
	want := "# Guide\nconnect port: 200\nhello-from-the-allowed-host\nconnect port: 403\ndirect: refused\n"
	if got != want {
		t.Errorf("what the agent saw:\n%s\nwant:\n%s\nserver log:\n%s", got, want, srv.logs())
	}
	if !strings.Contains(srv.logs(), strconv.Itoa(otherPort)) {
		t.Errorf("the refused host is not in the server's log:\n%s", srv.logs())
	}
}
