package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/githost/pushonly"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/store"
)

// The job engine's own cost around an agent, on a repository whose history
// weighs about 1 GiB (see pipelineHistory): the engine on SQLite, gitrepo
// workspaces, a trivial agent that adds one file, the push-only host, and a
// local bare remote (file://). Measured from the engine's log lines and the
// agent's calls: claim → agent start, for the first job (which builds the
// mirror) and the later ones (each after someone else pushed a commit with
// a new image, so that every fetch brings something; every third one a
// follow-up that continues a pushed branch), and agent exit → completed,
// with the push inside it reported apart. One run of the benchmark is one
// server's life: new workspace folder, new remote, a series of jobs. The
// agent ends at once, which is the worst case for what follows it: a
// file git cannot tell from a later change by its time (see gitrepo's
// settle) would be read again at once. BenchmarkJobPipeline/clone is the
// clone every job made before the mirror.
//
//	cd bench && go test -run '^$' -bench BenchmarkJobPipeline -benchtime 1x -count 6 .
//
// The first run makes the history (tens of seconds) and keeps it in the
// temporary folder for the next ones.

const (
	pipelineCommits   = 2048      // commits of the generated history
	pipelineBlob      = 512 << 10 // one new image of this size per commit
	pipelineImages    = 128       // image paths, rewritten in turn
	pipelinePages     = 500       // Markdown pages
	pipelineLaterJobs = 12        // jobs after the first, per run
)

func BenchmarkJobPipeline(b *testing.B) {
	if testing.Short() {
		b.Skip("generates a repository with 1 GiB of history; skipped with -short")
	}
	history := pipelineHistory(b)
	b.Run("mirror", func(b *testing.B) {
		var first, later, overhead, push []time.Duration
		for range b.N {
			f, l, o, p := runPipeline(b, history)
			first = append(first, f)
			later, overhead, push = append(later, l...), append(overhead, o...), append(push, p...)
		}
		b.ReportMetric(median(first).Seconds(), "first-start-s")
		b.ReportMetric(ms(median(later)), "start-p50-ms")
		b.ReportMetric(ms(slices.Max(later)), "start-max-ms")
		b.ReportMetric(ms(median(overhead)), "exit-to-completed-less-push-p50-ms")
		b.ReportMetric(ms(slices.Max(overhead)), "exit-to-completed-less-push-max-ms")
		b.ReportMetric(ms(median(push)), "push-p50-ms")
	})
	// What every job cost before the mirror: the clone Open used to make.
	b.Run("clone", func(b *testing.B) {
		var took []time.Duration
		for range b.N {
			remote := pipelineRemote(b, history)
			dir := b.TempDir()
			start := time.Now()
			benchGit(b, dir, "clone", "--quiet", "--single-branch", "--no-tags", "--branch", "main",
				"--separate-git-dir="+filepath.Join(dir, "git"), "file://"+remote, filepath.Join(dir, "tree"))
			took = append(took, time.Since(start))
		}
		b.ReportMetric(median(took).Seconds(), "clone-s")
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// runPipeline runs one server's series of jobs against a new remote of
// history and returns: claim → agent start of the first job and of the
// later ones, agent exit → completed (the push taken out), and the pushes.
func runPipeline(b *testing.B, history string) (first time.Duration, later, overhead, pushes []time.Duration) {
	ctx := context.Background()
	remote := pipelineRemote(b, history)
	st := openSQLite(b)
	ev := newPipelineEvents()
	log := slog.New(ev)
	repos, err := gitrepo.New(gitrepo.Config{Dir: b.TempDir(), Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	parts := engine.Parts{Repositories: repos, Agent: pipelineAgent{ev}, PullRequests: pushonly.Host{}}
	eng, err := engine.New(engine.Config{Store: st, Owner: "bench", Logger: log, PollInterval: time.Second,
		Parts: func(context.Context, store.Project) (engine.Parts, error) { return parts, nil }})
	if err != nil {
		b.Fatal(err)
	}
	eng.Start()
	defer eng.Shutdown(ctx)
	const project = "handbook"
	if err := st.CreateProject(ctx, store.Project{ID: project, Repository: "file://" + remote, Ref: "main"}); err != nil {
		b.Fatal(err)
	}

	var commands []gitCommand
	previous := ""
	for i := range pipelineLaterJobs + 1 {
		id := fmt.Sprintf("job-%02d", i)
		if i > 0 {
			pipelineAdvance(b, remote, i)
		}
		ev.reset()
		if i > 0 && i%3 == 0 {
			id = previous // a follow-up continues the branch its job pushed
			if _, _, err := st.AddPrompt(ctx, store.NewPrompt{ProjectID: project, JobID: id, Prompt: "And more.", At: time.Now()}); err != nil {
				b.Fatal(err)
			}
		} else if _, _, err := st.CreateJob(ctx, store.NewJob{ID: id, ProjectID: project, Prompt: "Document it.",
			Repository: "file://" + remote, Ref: "main", Branch: "docs-agent/" + id, CreatedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		eng.JobQueued()
		r := ev.wait(b)
		start, exit := r.started.Sub(r.claimed), r.completed.Sub(r.exited)
		if i == 0 {
			first = start
		} else {
			later = append(later, start)
			commands = append(commands, r.commands...)
		}
		overhead, pushes = append(overhead, exit-r.push), append(pushes, r.push)
		previous = id
	}
	logCommands(b, commands)
	return first, later, overhead, pushes
}

// logCommands logs each git command's median time in the later jobs, to
// show where a job's time goes.
func logCommands(b *testing.B, cmds []gitCommand) {
	by := map[string][]time.Duration{}
	for _, c := range cmds {
		by[c.name] = append(by[c.name], c.took)
	}
	var lines []string
	for name, ds := range by {
		lines = append(lines, fmt.Sprintf("%s ×%d p50 %.1f ms", name, len(ds), ms(median(ds))))
	}
	slices.Sort(lines)
	b.Logf("git commands of the later jobs: %s", strings.Join(lines, "; "))
}

// pipelineRun is what one run left in the logs and the agent.
type pipelineRun struct {
	claimed, started, exited, completed time.Time
	push                                time.Duration
	commands                            []gitCommand
	failed                              string
}

// gitCommand is one git command of a run: "step/command" and its time.
type gitCommand struct {
	name string
	took time.Duration
}

// pipelineEvents is a slog handler that records the times of the engine's
// and gitrepo's log lines of the run under way, and the agent's calls.
type pipelineEvents struct {
	mu   sync.Mutex
	run  pipelineRun
	done chan struct{}

	attrs []slog.Attr
	root  *pipelineEvents
}

func newPipelineEvents() *pipelineEvents {
	ev := &pipelineEvents{}
	ev.root = ev
	return ev
}

func (ev *pipelineEvents) reset() {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.run = pipelineRun{}
	ev.done = make(chan struct{})
}

func (ev *pipelineEvents) wait(b *testing.B) pipelineRun {
	ev.mu.Lock()
	done := ev.done
	ev.mu.Unlock()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatal("no job completed within 10 minutes")
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.run.failed != "" {
		b.Fatalf("the job did not complete: %s", ev.run.failed)
	}
	return ev.run
}

func (ev *pipelineEvents) Enabled(context.Context, slog.Level) bool { return true }

func (ev *pipelineEvents) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &pipelineEvents{root: ev.root, attrs: append(slices.Clone(ev.attrs), attrs...)}
}

func (ev *pipelineEvents) WithGroup(string) slog.Handler { return ev }

func (ev *pipelineEvents) Handle(_ context.Context, r slog.Record) error {
	attrs := map[string]slog.Value{}
	for _, a := range ev.attrs {
		attrs[a.Key] = a.Value
	}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value
		return true
	})
	root := ev.root
	root.mu.Lock()
	defer root.mu.Unlock()
	run := &root.run
	switch r.Message {
	case "engine: job claimed":
		run.claimed = r.Time
	case "gitrepo: git":
		took := attrs["took"].Duration()
		if attrs["step"].String() == "push" {
			run.push += took
		}
		run.commands = append(run.commands, gitCommand{attrs["step"].String() + "/" + attrs["command"].String(), took})
	case "engine: job completed", "engine: job failed", "engine: attempt failed; the job will be retried":
		run.completed = r.Time
		if r.Message != "engine: job completed" {
			run.failed = r.Message + ": " + attrs["reason"].String() + attrs["error"].String()
		}
		if root.done != nil {
			close(root.done)
			root.done = nil
		}
	}
	return nil
}

// pipelineAgent is the trivial agent: it adds one page.
type pipelineAgent struct{ ev *pipelineEvents }

func (a pipelineAgent) Run(_ context.Context, task engine.Task) error {
	a.ev.mu.Lock()
	a.ev.run.started = time.Now()
	a.ev.mu.Unlock()
	name := fmt.Sprintf("agent-%d.md", len(task.Prompts))
	err := os.WriteFile(filepath.Join(task.Dir, "docs", name), []byte("# "+task.JobID+"\n"), 0o644)
	a.ev.mu.Lock()
	a.ev.run.exited = time.Now()
	a.ev.mu.Unlock()
	return err
}

// pipelineHistory returns a bare repository whose main branch has
// pipelineCommits commits, each adding a new random (incompressible)
// image of pipelineBlob bytes to one of pipelineImages paths and changing
// a page: about 1 GiB of history, and a tree of about 64 MiB of images and
// 500 pages. It is made once, with git fast-import, and kept in the
// temporary folder; the benchmark never changes it (see pipelineRemote).
func pipelineHistory(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "docsapi-bench-gitrepo")
	repo := filepath.Join(dir, fmt.Sprintf("history-%dx%dk.git", pipelineCommits, pipelineBlob>>10))
	marker := repo + ".built"
	if m, err := os.ReadFile(marker); err == nil {
		b.Logf("history %s, made in %s", repo, strings.TrimSpace(string(m)))
		return repo
	} else if !errors.Is(err, os.ErrNotExist) {
		b.Fatal(err)
	}
	if err := os.RemoveAll(repo); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	benchGit(b, dir, "init", "--quiet", "--bare", "--initial-branch=main", repo)
	fastImport(b, repo, func(w *bufio.Writer) {
		rng := rand.NewChaCha8([32]byte{1})
		blob := make([]byte, pipelineBlob)
		for i := range pipelineCommits {
			fmt.Fprintf(w, "commit refs/heads/main\ncommitter Gen <gen@example.com> %d +0000\ndata <<EOT\nChange %d\nEOT\n", 1500000000+60*i, i)
			if i == 0 {
				for p := range pipelinePages {
					fmt.Fprintf(w, "M 644 inline docs/page-%03d.md\ndata <<EOT\n# Page %d\nEOT\n", p, p)
				}
			}
			_, _ = rng.Read(blob)
			fmt.Fprintf(w, "M 644 inline images/img-%03d.bin\ndata %d\n", i%pipelineImages, len(blob))
			w.Write(blob)
			fmt.Fprintf(w, "\nM 644 inline docs/page-%03d.md\ndata <<EOT\n# Page %d\n\nRevision %d.\nEOT\n\n", i%pipelinePages, i%pipelinePages, i)
		}
	})
	d := time.Since(start).Round(time.Second)
	if err := os.WriteFile(marker, []byte(d.String()+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("history %s made in %s", repo, d)
	return repo
}

// pipelineRemote makes a new bare remote whose main is history's, reading
// history's objects through an alternates file: made at once, and what
// the jobs push lands in the new remote, not in history.
func pipelineRemote(b *testing.B, history string) string {
	b.Helper()
	remote := filepath.Join(b.TempDir(), "docs.git")
	benchGit(b, filepath.Dir(remote), "init", "--quiet", "--bare", "--initial-branch=main", remote)
	alternates := filepath.Join(remote, "objects", "info", "alternates")
	if err := os.WriteFile(alternates, []byte(filepath.Join(history, "objects")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	main := strings.TrimSpace(benchGit(b, history, "rev-parse", "refs/heads/main"))
	benchGit(b, remote, "update-ref", "refs/heads/main", main)
	return remote
}

// pipelineAdvance pushes to the remote's main what someone else would: a
// commit with a new image and a changed page.
func pipelineAdvance(b *testing.B, remote string, n int) {
	b.Helper()
	fastImport(b, remote, func(w *bufio.Writer) {
		blob := make([]byte, pipelineBlob)
		rng := rand.NewChaCha8([32]byte{byte(n), 2})
		_, _ = rng.Read(blob)
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter Other <other@example.com> %d +0000\ndata <<EOT\nUpstream %d\nEOT\nfrom refs/heads/main^0\n", time.Now().Unix(), n)
		fmt.Fprintf(w, "M 644 inline images/new-%03d.bin\ndata %d\n", n, len(blob))
		w.Write(blob)
		fmt.Fprintf(w, "\nM 644 inline docs/page-000.md\ndata <<EOT\n# Page 0\n\nUpstream %d.\nEOT\n\n", n)
	})
}

// fastImport feeds what write writes to git fast-import in repo. Blobs are
// stored without compression or deltas: they are random, and both would
// only cost time.
func fastImport(b *testing.B, repo string, write func(*bufio.Writer)) {
	b.Helper()
	cmd := exec.Command("git", "-c", "core.compression=0", "-c", "pack.compression=0",
		"fast-import", "--quiet", "--big-file-threshold=64k")
	cmd.Dir = repo
	cmd.Env = append(benchGitEnv(b), "GIT_DIR="+repo)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	write(w)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, stderr.String())
	}
}

// benchGitEnv is a hermetic environment for the benchmark's own git
// commands: the machine's git configuration changes nothing.
func benchGitEnv(b *testing.B) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "LC_ALL=C"}
}

// benchGit runs git in dir and returns its output.
func benchGit(b *testing.B, dir string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = benchGitEnv(b)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
