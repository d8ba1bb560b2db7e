package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
)

// TestMain lets the test binary be the sandbox's network bridge, as main
// lets the program be: with -allow-host, the bridge is os.Executable(),
// which under go test is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == bridgeCommand {
		os.Exit(sandbox.BridgeMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

var sandboxCheck = sync.OnceValue(func() error { return sandbox.Check(sandbox.DefaultBwrap) })

// requireSandbox skips a test whose agent runs in the sandbox where this
// machine cannot run it, or fails it where the test set-up says it can
// (sandboxtest.Require). It is called before the program starts: an agent
// that cannot start would leave the test waiting for its job.
func requireSandbox(t *testing.T) {
	t.Helper()
	sandboxtest.Require(t, sandboxCheck())
}

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
	err := <-in.done
	in.cancel() // run has returned: nothing for the clean-up to stop
	in.cancel = nil
	t.Fatalf("run ended before serving: %v\noutput:\n%s", err, strings.Join(in.Lines, "\n"))
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
	// The test is about -repo, not the sandbox: off, so that whether this
	// machine can run it does not decide the error.
	cfg.agent, cfg.noSandbox = []string{"true"}, true
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

// handbook returns a local bare repository whose main branch holds
// guide.md, in root.
func handbook(t *testing.T, root string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
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
	return bare
}

// writeAgent writes the agent, a shell script, to root.
func writeAgent(t *testing.T, root, source string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the test's agent is a shell script")
	}
	script := filepath.Join(root, "agent.sh")
	if err := os.WriteFile(script, []byte(source), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// appendAgent appends the newest instruction to guide.md.
const appendAgent = "#!/bin/sh\nset -e\nprintf '\\n%s\\n' \"$(tail -n 1)\" >> guide.md\n"

// runJob runs one job with the prompt and returns guide.md on its branch.
func (in *instance) runJob(bare, prompt string) string {
	in.t.Helper()
	job, err := in.client(in.Key).AgentJobs.CreateAndWait(in.t.Context(), "",
		docsapi.CreateJobParams{Prompt: prompt},
		docsapi.WaitParams{MinInterval: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond, Timeout: time.Minute})
	if err != nil {
		in.t.Fatalf("CreateAndWait: %v", err)
	}
	if job.Status != docsapi.JobStatusCompleted || job.PRLink != "" || job.Source.Repository != bare {
		in.t.Fatalf("job = %+v, want completed on %s without a pull request (push-only)", job, bare)
	}
	return git(in.t, bare, "show", "docs-agent/"+job.ID+":guide.md")
}

// TestRunsJobsWithAnAgent runs a job through the embedded API, the engine
// and a command agent (a shell script that appends the newest instruction to
// guide.md) in its sandbox, on a local bare repository.
func TestRunsJobsWithAnAgent(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	bare := handbook(t, root)
	cfg := testConfig(t, t.TempDir())
	cfg.repo, cfg.agent = bare, []string{writeAgent(t, root, appendAgent)}
	in := start(t, cfg)
	if got := in.runJob(bare, "Add a troubleshooting section"); got != "# Guide\n\nAdd a troubleshooting section\n" {
		t.Errorf("guide.md on the job's branch = %q", got)
	}
	if err := in.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if hasLine(in.Lines, "no agent given") || !hasLine(in.Lines, "the agent runs in a sandbox: it sees its clone and the system's programs, nothing else of this machine, and has no network") {
		t.Errorf("output:\n%s\nwant the agent's sandbox described", strings.Join(in.Lines, "\n"))
	}
}

// TestNoSandbox: with -no-sandbox the agent runs, on any machine, and the
// program warns that it can read everything the program can.
func TestNoSandbox(t *testing.T) {
	root := t.TempDir()
	bare := handbook(t, root)
	cfg := testConfig(t, t.TempDir())
	cfg.repo, cfg.agent, cfg.noSandbox = bare, []string{writeAgent(t, root, appendAgent)}, true
	in := start(t, cfg)
	if got := in.runJob(bare, "Add a FAQ"); got != "# Guide\n\nAdd a FAQ\n" {
		t.Errorf("guide.md on the job's branch = %q", got)
	}
	if err := in.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !hasLine(in.Lines, "WARNING: -no-sandbox: the agent runs without a sandbox, as this program's user: it can read everything this program can") {
		t.Errorf("output:\n%s\nwant a warning", strings.Join(in.Lines, "\n"))
	}
}

// TestAllowHost: with -allow-host, the sandboxed agent reaches that host
// through the proxy, by way of the bridge (this program, here the test
// binary), and no other host. The agent is a bash script speaking CONNECT
// by hand; it writes what it saw into guide.md.
func TestAllowHost(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello-from-the-allowed-host")
	}))
	defer allowed.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	allowedPort, otherPort := allowed.Listener.Addr().(*net.TCPAddr).Port, other.Addr().(*net.TCPAddr).Port

	root := t.TempDir()
	bare := handbook(t, root)
	agent := writeAgent(t, root, `#!/bin/bash
set -u
proxy=${HTTPS_PROXY#http://}
connect() { # port name
  exec 3<>/dev/tcp/${proxy%:*}/${proxy#*:} || { echo "no proxy" >> guide.md; return 1; }
  printf 'CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n' "$1" "$1" >&3
  read -r version code rest <&3
  echo "$2: $code" >> guide.md
  while read -r line <&3 && [ -n "${line%$'\r'}" ]; do :; done
  [ "$code" = 200 ]
}
connect `+strconv.Itoa(allowedPort)+` allowed && {
  printf 'GET / HTTP/1.0\r\nHost: allowed\r\n\r\n' >&3
  tail -n 1 <&3 >> guide.md; echo >> guide.md
}
connect `+strconv.Itoa(otherPort)+` other
exit 0
`)
	cfg := testConfig(t, t.TempDir())
	cfg.repo, cfg.agent = bare, []string{agent}
	// As the command line gives it: repeated and comma-separated.
	fs := flag.NewFlagSet("embed-server", flag.ContinueOnError)
	fs.Var(&cfg.allowHosts, "allow-host", "")
	fs.Var(&cfg.allowAddrs, "allow-address", "")
	// The allowed host listens on this machine's loopback interface, which
	// the proxy dials only when told.
	if err := fs.Parse([]string{"-allow-host", "127.0.0.1:" + strconv.Itoa(allowedPort) + ",api.example.com", "-allow-host", "*.example.org",
		"-allow-address", "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"127.0.0.1:" + strconv.Itoa(allowedPort), "api.example.com", "*.example.org"}; !slices.Equal(cfg.allowHosts, want) {
		t.Fatalf("-allow-host gave %q, want %q", cfg.allowHosts, want)
	}
	in := start(t, cfg)
	if got, want := in.runJob(bare, "Fetch the allowed host"), "# Guide\nallowed: 200\nhello-from-the-allowed-host\nother: 403\n"; got != want {
		t.Errorf("what the agent saw:\n%s\nwant:\n%s", got, want)
	}
	if err := in.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !hasLine(in.Lines, "the agent runs in a sandbox: it sees its clone and the system's programs, nothing else of this machine, and reaches only 127.0.0.1:") {
		t.Errorf("output:\n%s\nwant the allowed hosts named", strings.Join(in.Lines, "\n"))
	}
}

func TestAllowHostRefusals(t *testing.T) {
	var h hostList
	if err := h.Set("a.example,,b.example"); err == nil {
		t.Errorf("an empty host was accepted: %q", h)
	}
	cfg := testConfig(t, t.TempDir())
	cfg.repo, cfg.agent, cfg.noSandbox, cfg.allowHosts = "unused", []string{"true"}, true, hostList{"api.example.com"}
	if err := run(t.Context(), cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "-allow-host") || !strings.Contains(err.Error(), "-no-sandbox") {
		t.Errorf("run = %v, want -allow-host refused with -no-sandbox", err)
	}
}
