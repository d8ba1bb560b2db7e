package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

const (
	browser = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
	chatGPT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
	claude  = "Claude-User (claude-code/2.0.1; +https://support.anthropic.com/)"
	crawler = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

// testConfig listens on a free port of the loopback interface and never
// flushes views on its own, so that only the shutdown writes them.
func testConfig(t *testing.T, data string) config {
	return config{
		addr:    "127.0.0.1:0",
		data:    data,
		project: "handbook",
		flush:   time.Hour,
		logger:  slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// instance is run, running in the background, as a signal would find it.
type instance struct {
	t      *testing.T
	URL    string   // the site's root, without the trailing slash
	Key    string   // the key printed at this start, if any
	Lines  []string // the output so far
	lines  <-chan string
	cancel context.CancelFunc
	done   chan error
}

// start runs the program and reads its output up to the site's address.
func start(t *testing.T, cfg config) *instance {
	t.Helper()
	pr, pw := io.Pipe()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{t: t, lines: lines, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := run(ctx, cfg, pw)
		pw.Close()
		in.done <- err
	}()
	t.Cleanup(func() {
		if in.cancel != nil {
			in.stop()
		}
	})
	for line := range lines {
		in.Lines = append(in.Lines, line)
		if key, ok := strings.CutPrefix(line, "API key for project handbook (shown this once; only its hash is stored): "); ok {
			in.Key = key
		}
		if addr, ok := strings.CutPrefix(line, "docs site: "); ok {
			in.URL = strings.TrimSuffix(addr, "/")
			return in
		}
	}
	t.Fatalf("run ended before serving: %v\noutput:\n%s", <-in.done, strings.Join(in.Lines, "\n"))
	return nil
}

// stop does what SIGINT does (main turns it into the context's end), waits
// for run to return, and returns its error; the output is in Lines.
func (in *instance) stop() error {
	in.cancel()
	in.cancel = nil
	var err error
	select {
	case err = <-in.done:
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		in.t.Fatal("run did not return within a minute of the interrupt")
	}
	for line := range in.lines {
		in.Lines = append(in.Lines, line)
	}
	return err
}

// get requests path without following redirects and checks the status.
func (in *instance) get(method, path, userAgent string, want int) string {
	in.t.Helper()
	req, err := http.NewRequest(method, in.URL+path, nil)
	if err != nil {
		in.t.Fatal(err)
	}
	req.Header.Set("User-Agent", userAgent)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		in.t.Fatal(err)
	}
	if resp.StatusCode != want {
		in.t.Fatalf("%s %s: %s, want %d", method, path, resp.Status, want)
	}
	return string(body)
}

// client is an SDK client of the instance's API, under /api.
func (in *instance) client(key string) *docsapi.Client {
	in.t.Helper()
	c, err := docsapi.NewClient(key, docsapi.WithBaseURL(in.URL+"/api"), docsapi.WithProjectID("handbook"))
	if err != nil {
		in.t.Fatal(err)
	}
	return c
}

func hasLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestCountsViewsAndFlushesThemAtShutdown(t *testing.T) {
	data := t.TempDir()
	first := start(t, testConfig(t, data))
	if first.Key == "" {
		t.Fatalf("the first start printed no key:\n%s", strings.Join(first.Lines, "\n"))
	}

	if body := first.get("GET", "/guide/", browser, http.StatusOK); !strings.Contains(body, "<h1>Guide</h1>") {
		t.Fatalf("/guide/ served %q, want the guide", body)
	}
	first.get("GET", "/", browser, http.StatusOK)
	first.get("GET", "/guide/", browser, http.StatusOK)
	first.get("GET", "/guide/", claude, http.StatusOK)
	first.get("GET", "/faq/", chatGPT, http.StatusOK)
	// Not views: an asset, a redirect, a missing page, a HEAD, a crawler.
	first.get("GET", "/style.css", browser, http.StatusOK)
	first.get("GET", "/guide", browser, http.StatusMovedPermanently)
	first.get("GET", "/missing/", browser, http.StatusNotFound)
	first.get("HEAD", "/faq/", browser, http.StatusOK)
	first.get("GET", "/faq/", crawler, http.StatusOK)
	first.get("GET", "/api/healthz", browser, http.StatusOK)

	// Held in memory until the shutdown: the export shows nothing yet.
	ctx := t.Context()
	page, err := first.client(first.Key).Analytics.Views(ctx, "", docsapi.ViewsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Totals.Total != 0 || len(page.Views) != 0 {
		t.Fatalf("before the shutdown the export shows %+v, want nothing yet (flushes every hour)", page)
	}

	if err := first.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !hasLine(first.Lines, "shutting down") || !hasLine(first.Lines, "no agent given: jobs stay active") {
		t.Errorf("output:\n%s\nwant the jobs' status and the shutdown", strings.Join(first.Lines, "\n"))
	}

	// A second start on the same data: no new key, and the views are there.
	second := start(t, testConfig(t, data))
	if second.Key != "" || hasLine(second.Lines, "API key") || !hasLine(second.Lines, "project handbook: use the API key printed at its first start") {
		t.Errorf("the second start printed a key:\n%s", strings.Join(second.Lines, "\n"))
	}
	page, err = second.client(first.Key).Analytics.Views(ctx, "", docsapi.ViewsParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := docsapi.ViewsPage{
		Totals: docsapi.ViewCounts{Human: 3, AI: 2, Total: 5},
		Views: []docsapi.PageView{
			{Path: "/guide", Human: 2, AI: 1, Total: 3},
			{Path: "/", Human: 1, AI: 0, Total: 1},
			{Path: "/faq", Human: 0, AI: 1, Total: 1},
		},
	}
	if page.Totals != want.Totals || page.HasMore || len(page.Views) != len(want.Views) {
		t.Fatalf("export = %+v\nwant %+v", page, want)
	}
	for i := range want.Views {
		if page.Views[i] != want.Views[i] {
			t.Errorf("row %d = %+v, want %+v", i, page.Views[i], want.Views[i])
		}
	}
	if err := second.stop(); err != nil {
		t.Fatalf("second run: %v", err)
	}
}

func TestTemporaryDataFolder(t *testing.T) {
	tmp := t.TempDir()
	for _, name := range []string{"TMPDIR", "TMP", "TEMP"} {
		t.Setenv(name, tmp)
	}
	in := start(t, testConfig(t, ""))
	if in.Key == "" {
		t.Error("printed no key")
	}
	if !hasLine(in.Lines, "data in "+tmp) {
		t.Errorf("output:\n%s\nwant the temporary folder named", strings.Join(in.Lines, "\n"))
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("%d entries in the temporary folder while running, want 1", len(entries))
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("left %v (%v) in the temporary folder", entries, err)
	}
}

func TestAgentWithoutRepository(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.agent = []string{"true"}
	err := run(t.Context(), cfg, io.Discard)
	if err == nil || err.Error() != "an agent needs the docs repository: give -repo" {
		t.Fatalf("run = %v, want -repo asked for", err)
	}
}

// git runs git in dir for the test's own set-up and checks.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestRunsJobsWithAnAgent runs a job through the embedded API, the engine
// and a command agent (a shell script that appends the newest instruction to
// guide.md), on a local bare repository.
func TestRunsJobsWithAnAgent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the test's agent is a shell script")
	}
	root := t.TempDir()
	bare := filepath.Join(root, "handbook.git")
	git(t, root, "init", "--bare", bare)
	work := filepath.Join(root, "scratch")
	git(t, root, "clone", bare, work)
	if err := os.WriteFile(filepath.Join(work, "guide.md"), []byte("# Guide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "guide.md")
	git(t, work, "commit", "-m", "Initial docs")
	git(t, work, "push", "origin", "HEAD:main")
	script := filepath.Join(root, "agent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nset -e\nprintf '\\n%s\\n' \"$(tail -n 1)\" >> guide.md\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(t, t.TempDir())
	cfg.repo, cfg.agent = bare, []string{script}
	in := start(t, cfg)
	if hasLine(in.Lines, "no agent given") {
		t.Errorf("output:\n%s\nsays no agent runs", strings.Join(in.Lines, "\n"))
	}
	job, err := in.client(in.Key).AgentJobs.CreateAndWait(t.Context(), "",
		docsapi.CreateJobParams{Prompt: "Add a troubleshooting section"},
		docsapi.WaitParams{MinInterval: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("CreateAndWait: %v", err)
	}
	if job.Status != docsapi.JobStatusCompleted || job.PRLink != "" || job.Source.Repository != bare {
		t.Fatalf("job = %+v, want completed on %s without a pull request (push-only)", job, bare)
	}
	if got := git(t, bare, "show", "docs-agent/"+job.ID+":guide.md"); got != "# Guide\n\nAdd a troubleshooting section\n" {
		t.Errorf("guide.md on the job's branch = %q", got)
	}
	if err := in.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
}
