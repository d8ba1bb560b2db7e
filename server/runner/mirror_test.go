package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/runner"
	"github.com/docsapi/docsapi-go/server/store"
)

// mirrorProbe is an agent that tries every way it knows to the mirrors: the
// folder's path, the mirrors in it, and links it makes to them from the
// workspace, absolute and relative. It says what it reached, and fails if
// anything.
const mirrorProbe = `#!/bin/sh
reached=
ln -s "$MIRRORS" abs 2>/dev/null
ln -s "$MIRRORS_REL" rel 2>/dev/null
for p in "$MIRRORS" "$MIRRORS"/* "$MIRRORS"/*/config abs/ rel/; do
	if [ -e "$p" ] || ls "$p" >/dev/null 2>&1; then reached="$reached $p"; fi
done
for p in "$MIRRORS" abs rel; do
	if touch "$p/pwned" 2>/dev/null; then reached="$reached wrote:$p"; fi
done
rm -f abs rel
echo "# Probed" > probed.md
if [ -n "$reached" ]; then echo "reached:$reached" >&2; exit 3; fi
`

// A sandboxed agent cannot reach the mirrors: the sandbox shows it its
// workspace, not the folder around it. The same agent run unsandboxed does,
// which shows the probe would see them.
func TestSandboxedAgentCannotReachTheMirror(t *testing.T) {
	sandboxtest.Require(t, sandbox.Check(sandbox.DefaultBwrap))
	ctx := context.Background()
	bare := bareDocsRepo(t)
	script := filepath.Join(t.TempDir(), "probe.sh")
	if err := os.WriteFile(script, []byte(mirrorProbe), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]sandbox.Mode{"sandboxed": "", "unsandboxed": sandbox.Off} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			mirrors := filepath.Join(dir, gitrepo.MirrorFolder)
			run, err := runner.New(runner.Config{
				Git: gitrepo.Config{Dir: dir},
				Projects: map[string]runner.Project{"handbook": {
					Host: runner.Host{Kind: runner.PushOnly},
					Agent: runner.Agent{Kind: runner.Command, Command: command.Config{Command: script,
						// From the tree, in its workspace folder in dir.
						Env:     map[string]string{"MIRRORS": mirrors, "MIRRORS_REL": filepath.Join("..", "..", gitrepo.MirrorFolder)},
						Sandbox: sandbox.Config{Mode: mode}}},
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			parts, err := run.Parts(ctx, store.Project{ID: "handbook"})
			if err != nil {
				t.Fatal(err)
			}
			ws, err := parts.Repositories.Open(ctx, engine.RepoSpec{Repository: bare, Ref: "main", Branch: "job-probe"})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			if entries, err := os.ReadDir(mirrors); err != nil || len(entries) == 0 {
				t.Fatalf("no mirror to reach in %s: %v", mirrors, err)
			}
			err = parts.Agent.Run(ctx, engine.Task{JobID: "job-probe", ProjectID: "handbook", Dir: ws.Dir(), Prompts: []string{"probe"}})
			if _, serr := os.Stat(filepath.Join(ws.Dir(), "probed.md")); serr != nil {
				t.Fatalf("the probe did not run: %v (agent: %v)", serr, err)
			}
			if mode == sandbox.Off {
				if err == nil || !strings.Contains(err.Error(), "reached:") {
					t.Fatalf("unsandboxed, the probe reached nothing (%v): it cannot tell", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("the sandboxed agent reached a mirror: %v", err)
			}
			for _, p := range []string{filepath.Join(mirrors, "pwned"), filepath.Join(filepath.Dir(ws.Dir()), "pwned")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("the agent wrote %s", p)
				}
			}
			if _, err := ws.Publish(ctx, "probe"); err != nil {
				t.Fatalf("Publish: %v", err)
			}
		})
	}
}
