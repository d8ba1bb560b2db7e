// Quickstart runs the whole product on this machine, offline, in one command:
//
//	go run ./server/examples/quickstart
//
// It starts the self-hosted API with the embedded SQLite storage in a
// temporary folder, a job engine, a local git repository of sample docs, a
// local agent (this program itself, run again in "agent" mode: it edits the
// docs without any AI service) and push-only mode. It records some page
// views of the docs site through the middleware, then uses the SDK as a user
// would: it creates an agent job, waits for it, shows the change the agent
// pushed, and exports the page views.
//
// The agent runs in a bubblewrap sandbox where bubblewrap is installed and
// user namespaces are allowed; elsewhere the quickstart says so and runs it
// with the sandbox off. It needs git (2.32 or newer) on PATH; nothing leaves
// the machine. Pass
// -keep to keep the temporary folder (database and repository) for a look,
// and -serve to keep the server running after the tour, with its
// dashboard, until Ctrl-C: it prints the dashboard's address and the key to
// sign in with.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/runner"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

const (
	project = "acme-docs"
	prompt  = "Add a troubleshooting section to the quickstart guide"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		// Run by the job engine as the project's command agent.
		if err := runAgent(os.Stdin, "."); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(1)
		}
		return
	}
	var opts options
	flag.BoolVar(&opts.keep, "keep", false, "keep the temporary folder (database and git repository)")
	flag.BoolVar(&opts.serve, "serve", false, "keep the server and its dashboard running after the tour, until interrupted (Ctrl-C)")
	flag.Parse()
	// An interrupt ends the wait of -serve, and the deferred shutdowns run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		stop()
		os.Exit(1)
	}
}

// options are the quickstart's flags.
type options struct {
	keep  bool // keep the temporary folder
	serve bool // serve until ctx ends, after the tour
}

func run(ctx context.Context, out io.Writer, opts options) error {
	dir, err := os.MkdirTemp("", "docsapi-quickstart-")
	if err != nil {
		return err
	}
	if opts.keep {
		fmt.Fprintln(out, "Working folder (kept):", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	step(out, "1. A git repository of sample docs")
	repo, err := sampleRepository(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "   ", repo)

	step(out, "2. The self-hosted server: SQLite, a job engine, page-view recording")
	st, err := sqlite.Open(ctx, filepath.Join(dir, "docsapi.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	parts, err := runner.New(runner.Config{Projects: map[string]runner.Project{project: {
		Host:  runner.Host{Kind: runner.PushOnly},
		Agent: runner.Agent{Kind: runner.Command, Command: command.Config{Command: self, Args: []string{"agent"}, Sandbox: agentSandbox(out)}},
	}}})
	if err != nil {
		return err
	}
	quiet := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Config{Store: st, Owner: "quickstart", Parts: parts.Parts, Logger: quiet})
	if err != nil {
		return err
	}
	rec, err := pageviews.New(pageviews.Config{Sink: st})
	if err != nil {
		return err
	}
	// The dashboard's sessions are sealed with a secret New draws for this
	// run alone: they end with it.
	srv, err := server.New(server.Config{Store: st, Jobs: eng, PageViews: rec, Dashboard: server.DashboardConfig{Enabled: true}})
	if err != nil {
		return err
	}
	if _, err := srv.CreateProject(ctx, store.Project{ID: project, Name: "ACME docs", Repository: repo, Ref: "main", Model: "quickstart-local-agent"}); err != nil {
		return err
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{Name: "quickstart", Projects: []string{project}, Scopes: []store.Scope{store.ScopeWrite}})
	if err != nil {
		return err
	}
	views, err := rec.Middleware(pageviews.MiddlewareConfig{Project: project})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", srv))
	mux.Handle("/", views(docsSite(filepath.Join(dir, "scratch"))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	httpServer := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go httpServer.Serve(ln)
	base := "http://" + ln.Addr().String()
	eng.Start()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		httpServer.Shutdown(shutdown)
		eng.Shutdown(shutdown)
		rec.Close(shutdown)
	}()
	fmt.Fprintf(out, "    API:  %s/api\n    docs: %s/\n", base, base)
	fmt.Fprintf(out, "    admin key: %s… (in full with -serve, to sign in to the dashboard)\n", key.Secret[:12])

	step(out, "3. Readers visit the docs site (humans, AI agents, crawlers)")
	n, err := visitDocs(ctx, base)
	if err != nil {
		return err
	}
	if err := rec.Flush(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "    %d page requests; counted by the middleware and flushed to the store\n", n)

	step(out, "4. The SDK creates an agent job and waits for it")
	client, err := docsapi.NewClient(key.Secret, docsapi.WithBaseURL(base+"/api"), docsapi.WithProjectID(project))
	if err != nil {
		return err
	}
	job, err := client.AgentJobs.CreateAndWait(ctx, "", docsapi.CreateJobParams{Prompt: prompt}, docsapi.WaitParams{
		MinInterval: 200 * time.Millisecond, MaxInterval: time.Second, Timeout: 2 * time.Minute,
		OnUpdate: func(j *docsapi.Job) { fmt.Fprintf(out, "    job %s: %s\n", j.ID, j.Status) },
	})
	if err != nil {
		return fmt.Errorf("waiting for the job: %w", err)
	}
	prLink := "null (push-only: the branch was pushed, no pull request)"
	if job.PRLink != "" {
		prLink = job.PRLink
	}
	fmt.Fprintf(out, "    final state: status %s, model %s, source %s@%s\n    prLink: %s\n",
		job.Status, job.Model, filepath.Base(job.Source.Repository), job.Source.Ref, prLink)

	step(out, "5. The change the agent pushed (branch docs-agent/"+job.ID+")")
	diff, err := git(repo, "diff", "--stat", "--patch", "main", "docs-agent/"+job.ID)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		fmt.Fprintln(out, "    "+line)
	}

	step(out, "6. The SDK exports the page views (bots are kept apart, not exported)")
	fmt.Fprintf(out, "    %-24s %6s %6s %6s\n", "path", "human", "ai", "total")
	for v, err := range client.Analytics.AllViews(ctx, "", docsapi.ViewsParams{}) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "    %-24s %6d %6d %6d\n", v.Path, v.Human, v.AI, v.Total)
	}
	page, err := client.Analytics.Views(ctx, "", docsapi.ViewsParams{Limit: 1})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    %-24s %6d %6d %6d\n", "(totals)", page.Totals.Human, page.Totals.AI, page.Totals.Total)
	if !opts.serve {
		step(out, "Done. The server stops now; run with -serve to keep it running and look at its dashboard.")
		return nil
	}

	step(out, "7. The server keeps running (-serve): the dashboard")
	fmt.Fprintf(out, "    dashboard: %s/api/dashboard/\n", base)
	fmt.Fprintf(out, "    sign in with this admin key (printed this once; the server keeps only its hash):\n    %s\n", key.Secret)
	fmt.Fprintf(out, "    API: %s/api (the same key, as DOCSAPI_KEY, with DOCSAPI_BASE_URL=%s/api DOCSAPI_PROJECT=%s)\n", base, base, project)
	fmt.Fprintln(out, "    Stop with Ctrl-C: the server and the key end with this program", keptOrNot(opts.keep, dir))
	<-ctx.Done()
	step(out, "Stopped.")
	return nil
}

// keptOrNot says what becomes of the temporary folder at the end.
func keptOrNot(keep bool, dir string) string {
	if keep {
		return "(" + dir + " is kept)."
	}
	return "(its temporary folder is removed; -keep keeps it)."
}

// agentSandbox says how the agent will run. A real deployment requires the
// sandbox (the zero sandbox.Config), so that a server that cannot make one
// refuses to start; the quickstart must run anywhere, so where bubblewrap
// cannot run here it says so and turns the sandbox off, explicitly.
func agentSandbox(out io.Writer) sandbox.Config {
	if err := sandbox.Check(sandbox.DefaultBwrap); err != nil {
		fmt.Fprintf(out, "    The agent runs WITHOUT a sandbox (sandbox off): %v\n", err)
		return sandbox.Config{Mode: sandbox.Off}
	}
	fmt.Fprintln(out, "    The agent runs in a bubblewrap sandbox: it sees its workspace and nothing of the server")
	return sandbox.Config{}
}

func step(out io.Writer, title string) { fmt.Fprintln(out, "\n"+title) }

// sampleRepository makes a bare repository whose main branch holds a small
// docs site, and leaves a clone of it in dir/scratch for the docs server.
func sampleRepository(dir string) (string, error) {
	bare := filepath.Join(dir, "acme-docs.git")
	scratch := filepath.Join(dir, "scratch")
	if _, err := git(dir, "init", "--quiet", "--bare", bare); err != nil {
		return "", err
	}
	if _, err := git(dir, "clone", "--quiet", bare, scratch); err != nil {
		return "", err
	}
	pages := map[string]string{
		"index.md":      "# ACME\n\nWelcome to the ACME documentation.\n",
		"quickstart.md": "# Quickstart\n\nInstall ACME, then run `acme init`.\n",
		"reference.md":  "# Reference\n\nEvery command takes --help.\n",
	}
	for name, text := range pages {
		if err := os.WriteFile(filepath.Join(scratch, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "--quiet", "-m", "Sample docs"}, {"push", "--quiet", "origin", "HEAD:main"}} {
		if _, err := git(scratch, args...); err != nil {
			return "", err
		}
	}
	return bare, nil
}

// git runs git in dir with a fixed identity, so the quickstart does not
// depend on the machine's git configuration.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=Quickstart", "-c", "user.email=quickstart@example.com",
		"-c", "init.defaultBranch=main", "-c", "color.ui=never"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// docsSite serves the sample docs: /page as HTML, /page.md as Markdown.
func docsSite(root string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".md")
		if name == "" {
			name = "index"
		}
		text, err := os.ReadFile(filepath.Join(root, filepath.Base(name)+".md"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, ".md") {
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			w.Write(text)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<pre>%s</pre>", text)
	})
}

// visitDocs sends page requests as browsers, AI agents and crawlers do.
func visitDocs(ctx context.Context, base string) (int, error) {
	const (
		chrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
		safari  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
		claude  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)"
		chatgpt = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
		googleb = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	)
	visits := []struct{ path, ua string }{
		{"/", chrome}, {"/quickstart", chrome}, {"/quickstart/", safari}, {"/quickstart", safari},
		{"/reference", chrome}, {"/quickstart", claude}, {"/reference.md", "curl/8.5.0"}, {"/quickstart.md", chatgpt},
		{"/quickstart", googleb}, {"/reference", googleb}, {"/missing", chrome},
	}
	for _, v := range visits {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+v.path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("User-Agent", v.ua)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return len(visits), nil
}

// runAgent is the local agent: it reads the job's instructions on stdin and
// carries out the newest one by adding a section to the quickstart guide.
// A real deployment runs a coding agent or the LLM agent here instead.
func runAgent(stdin io.Reader, dir string) error {
	var last string
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			last = line // the newest instruction comes last
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if last == "" {
		return errors.New("no instruction on stdin")
	}
	title := "Troubleshooting"
	if !strings.Contains(strings.ToLower(last), "troubleshoot") {
		title = "Notes"
	}
	f, err := os.OpenFile(filepath.Join(dir, "quickstart.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "\n## %s\n\nIf `acme init` fails, check that you are in an empty folder and run it again.\n\n_Written for job %s: %q_\n",
		title, os.Getenv("DOCSAPI_JOB_ID"), last)
	return err
}
