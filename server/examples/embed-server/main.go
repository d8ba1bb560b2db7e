// Command embed-server embeds the self-hosted API in an existing web
// application: one http.ServeMux serves a small documentation site at / and
// the API under /api/, and counts the site's page views, human and AI apart,
// for the API's views export.
//
// It shows server.New mounted with http.StripPrefix; the page-view recorder
// and its middleware; the SQLite store; a project and an API key made on
// first start; and a shutdown that loses no view: on SIGINT or SIGTERM the
// HTTP server stops taking requests and finishes those in flight, then the
// recorder writes the views it still holds, then the store closes.
//
// Run it:
//
//	go run ./server/examples/embed-server [-addr localhost:8080] [-data ./docsapi-data] [-project handbook] [-flush 10s]
//
// It prints the addresses of the site and the API and, when the project has
// no API key yet (first start), makes one and prints it: this once, since
// only its hash is stored. Without -data everything is kept in a temporary
// folder removed at exit, so every start is a first start. Browse the site,
// then export its views with another example:
//
//	export DOCSAPI_BASE_URL=http://localhost:8080/api DOCSAPI_PROJECT=handbook DOCSAPI_KEY=mint_...
//	go run ./examples/export-views-csv     # the last 30 days, today included
//
// Views reach the store every 10 seconds (-flush) and at shutdown.
//
// Jobs: by default no job engine runs, so jobs created through the API stay
// active (server/examples/quickstart shows the full setup). To run them, give the
// docs repository with -repo and a command-line agent after the flags. Each
// job's branch (docs-agent/<job id>) is pushed to the repository and no pull
// request is opened (a push-only host: jobs complete with no prLink). The
// agent runs in a clone with a minimal environment; -pass-env lists the
// variables it needs.
//
// The agent runs in a bubblewrap sandbox (package sandbox): it sees its
// clone, a home of its own and the system's programs, nothing else of this
// machine, and has no network. bubblewrap (bwrap) must be installed and
// unprivileged user namespaces allowed; where they are not, the program
// refuses to start with an agent, and says why. -allow-host names a host
// the agent may reach, through a proxy (HTTPS), such as its model's API;
// repeat it or separate hosts with commas. The proxy dials no address of
// this machine or its networks (loopback, private, link-local, cloud
// metadata...) unless -allow-address names it, such as a model server at
// 127.0.0.1 or 10.0.0.0/24. -no-sandbox runs the agent without a sandbox, as this program's
// user: it can then read everything this program can, and reach any host.
// For example, with Claude Code:
//
//	go run ./server/examples/embed-server -data ./data -repo /srv/git/handbook.git \
//		-pass-env ANTHROPIC_API_KEY -allow-host api.anthropic.com \
//		-- claude -p --permission-mode acceptEdits
//
// -repo is a local path or a remote that git reaches without credentials;
// git (2.32 or newer) must be installed.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/runner"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// site is the documentation site: three pages and a style sheet.
//
//go:embed site
var site embed.FS

type config struct {
	addr       string // where to listen
	data       string // the folder of the database; "" for a temporary one
	project    string
	repo       string        // the docs repository, for jobs
	agent      []string      // the agent's command and arguments; none: no engine
	passEnv    []string      // variables of this environment the agent receives
	noSandbox  bool          // run the agent without its sandbox
	allowHosts hostList      // the hosts the sandboxed agent may reach
	allowAddrs hostList      // the addresses of this machine or its networks the proxy may dial for them
	flush      time.Duration // how often views are written to the store
	logger     *slog.Logger
}

// bridgeCommand is the first argument with which the sandbox starts this
// program as its network bridge (see agentSandbox).
const bridgeCommand = "sandbox-bridge"

func main() {
	// With -allow-host, the sandbox runs this very program, with these
	// arguments, as the agent's network bridge: it is not started to serve
	// then, and hands over to the bridge before anything else.
	if len(os.Args) > 1 && os.Args[1] == bridgeCommand {
		os.Exit(sandbox.BridgeMain(os.Args[2:]))
	}

	var cfg config
	flag.StringVar(&cfg.addr, "addr", "localhost:8080", "the address to listen on")
	flag.StringVar(&cfg.data, "data", "", "the folder for the database (default: a temporary folder, removed at exit)")
	flag.StringVar(&cfg.project, "project", "handbook", "the project's ID")
	flag.StringVar(&cfg.repo, "repo", "", "the docs repository that jobs change: a local path or a git URL")
	flag.DurationVar(&cfg.flush, "flush", pageviews.DefaultFlushInterval, "how often page views are written to the store (and at exit)")
	passEnv := flag.String("pass-env", "", "comma-separated variables the agent receives, such as ANTHROPIC_API_KEY")
	flag.BoolVar(&cfg.noSandbox, "no-sandbox", false, "run the agent without a sandbox: it can then read everything this program can")
	flag.Var(&cfg.allowHosts, "allow-host", "a `host` the sandboxed agent may reach through a proxy (HTTPS), such as api.anthropic.com; repeat the flag or separate hosts with commas")
	flag.Var(&cfg.allowAddrs, "allow-address", "an `address` or CIDR network of this machine or its networks that the proxy may dial for the allowed hosts, such as 127.0.0.1 or 10.0.0.0/24 (refused by default)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: embed-server [flags] [-- agent command and arguments]")
		flag.PrintDefaults()
	}
	flag.Parse()
	cfg.agent = flag.Args()
	if *passEnv != "" {
		cfg.passEnv = strings.Split(*passEnv, ",")
	}
	cfg.logger = slog.New(slog.NewTextHandler(os.Stderr, nil))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed-server:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then shuts down in order.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	if cfg.data == "" {
		dir, err := os.MkdirTemp("", "docsapi-embed-server-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.data = dir
		fmt.Fprintf(stdout, "data in %s (temporary: removed at exit; use -data to keep it)\n", dir)
	}
	a, err := newApp(ctx, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return errors.Join(err, a.close())
	}
	if a.newKey != "" {
		fmt.Fprintf(stdout, "API key for project %s (shown this once; only its hash is stored): %s\n", cfg.project, a.newKey)
	} else {
		fmt.Fprintf(stdout, "project %s: use the API key printed at its first start\n", cfg.project)
	}
	fmt.Fprintf(stdout, "docs site: http://%s/\nAPI:       http://%s/api/\n", ln.Addr(), ln.Addr())
	switch {
	case a.engine == nil:
		fmt.Fprintln(stdout, "no agent given: jobs stay active")
	case cfg.noSandbox:
		fmt.Fprintln(stdout, "WARNING: -no-sandbox: the agent runs without a sandbox, as this program's user: it can read everything this program can (the data folder, this program's environment), write wherever it can, and reach any host")
	case len(cfg.allowHosts) > 0:
		fmt.Fprintf(stdout, "the agent runs in a sandbox: it sees its clone and the system's programs, nothing else of this machine, and reaches only %s, through a proxy\n", strings.Join(cfg.allowHosts, ", "))
	default:
		fmt.Fprintln(stdout, "the agent runs in a sandbox: it sees its clone and the system's programs, nothing else of this machine, and has no network")
	}

	a.start()
	hs := &http.Server{Handler: a.handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(cfg.logger.Handler(), slog.LevelError)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served: // the listener failed
	case <-ctx.Done():
	}

	// Stop taking requests and let those in flight finish, so that their
	// views are counted before the recorder's last flush.
	fmt.Fprintln(stdout, "shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil {
		err = errors.Join(err, fmt.Errorf("stopping the HTTP server: %w", serr))
	}
	return errors.Join(err, a.close())
}

// app is the application: the handler and what must be closed after it.
type app struct {
	handler  http.Handler
	store    *sqlite.Store
	recorder *pageviews.Recorder
	engine   *engine.Engine // nil without an agent
	newKey   string         // the key made at this start, if any
}

// newApp opens the store, makes the project and a key if they are missing,
// and builds the handler. Nothing listens or runs in the background yet.
func newApp(ctx context.Context, cfg config) (a *app, err error) {
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	st, err := sqlite.Open(ctx, filepath.Join(cfg.data, "docsapi.db"))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	a = &app{store: st}

	a.recorder, err = pageviews.New(pageviews.Config{Sink: st, FlushInterval: cfg.flush, Logger: cfg.logger})
	if err != nil {
		return nil, err
	}
	countViews, err := a.recorder.Middleware(pageviews.MiddlewareConfig{Project: cfg.project})
	if err != nil {
		return nil, err
	}

	scfg := server.Config{Store: st, PageViews: a.recorder, Logger: cfg.logger}
	if len(cfg.agent) > 0 {
		if a.engine, err = newEngine(st, cfg); err != nil {
			return nil, err
		}
		scfg.Jobs = a.engine // new jobs start at once
	}
	srv, err := server.New(scfg)
	if err != nil {
		return nil, err
	}
	if a.newKey, err = setUp(ctx, srv, st, cfg); err != nil {
		return nil, err
	}

	docs, err := fs.Sub(site, "site")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux() // the application's own mux
	mux.Handle("/api/", http.StripPrefix("/api", srv))
	mux.Handle("/", countViews(http.FileServerFS(docs)))
	a.handler = mux
	return a, nil
}

// setUp makes the project if it does not exist, and a key for it if it has
// none that works; it returns the new key's secret, or "".
func setUp(ctx context.Context, srv *server.Server, st store.Store, cfg config) (string, error) {
	p, err := st.Project(ctx, cfg.project)
	switch {
	case errors.Is(err, store.ErrNotFound):
		p = store.Project{ID: cfg.project, Name: "Handbook", Repository: cfg.repo}
		if _, err := srv.CreateProject(ctx, p); err != nil {
			return "", err
		}
	case err != nil:
		return "", err
	case cfg.repo != "" && cfg.repo != p.Repository:
		p.Repository = cfg.repo
		if err := st.UpdateProject(ctx, p); err != nil {
			return "", err
		}
	}
	if len(cfg.agent) > 0 && p.Repository == "" {
		return "", errors.New("an agent needs the docs repository: give -repo")
	}

	keys, err := srv.Keys(ctx)
	if err != nil {
		return "", err
	}
	now := time.Now()
	for _, k := range keys {
		if slices.Contains(k.Projects, cfg.project) && k.RevokedAt.IsZero() && (k.ExpiresAt.IsZero() || k.ExpiresAt.After(now)) {
			return "", nil // the key printed at an earlier start
		}
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{
		Name: "embed-server example", Projects: []string{cfg.project}, Scopes: []store.Scope{store.ScopeWrite},
	})
	return key.Secret, err
}

// newEngine makes the job engine: the project's jobs run the command agent
// in a clone of the repository and push their branch.
func newEngine(st store.Store, cfg config) (*engine.Engine, error) {
	sb, err := agentSandbox(cfg)
	if err != nil {
		return nil, err
	}
	parts, err := runner.New(runner.Config{
		Logger: cfg.logger,
		Projects: map[string]runner.Project{cfg.project: {
			Host: runner.Host{Kind: runner.PushOnly},
			Agent: runner.Agent{Kind: runner.Command, Command: command.Config{
				Command: cfg.agent[0], Args: cfg.agent[1:], PassEnv: cfg.passEnv, Sandbox: sb,
			}},
		}},
	})
	if errors.Is(err, sandbox.ErrUnavailable) {
		return nil, fmt.Errorf("%w; to run the agent without a sandbox all the same, give -no-sandbox", err)
	}
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return engine.New(engine.Config{
		Store:  st,
		Owner:  fmt.Sprintf("%s-%d", host, os.Getpid()), // unique among engines sharing the store
		Parts:  parts.Parts,
		Logger: cfg.logger,
	})
}

// agentSandbox returns the agent's sandbox settings: the sandbox is
// required (the zero sandbox.Config) unless -no-sandbox turns it off.
func agentSandbox(cfg config) (sandbox.Config, error) {
	if cfg.noSandbox {
		if len(cfg.allowHosts) > 0 || len(cfg.allowAddrs) > 0 {
			return sandbox.Config{}, errors.New("-allow-host and -allow-address name what the agent's sandbox lets it reach: without a sandbox (-no-sandbox) it reaches any host; give one flag or the other")
		}
		return sandbox.Config{Mode: sandbox.Off}, nil
	}
	sb := sandbox.Config{AllowHosts: cfg.allowHosts, AllowAddresses: cfg.allowAddrs}
	if len(cfg.allowHosts) > 0 {
		// The sandbox has no network: the agent reaches the allowed hosts
		// through a proxy that this program runs, and a bridge inside the
		// sandbox passes the agent's connections to it. That bridge is
		// this very program, started by the sandbox with the argument
		// sandbox-bridge, which main hands to sandbox.BridgeMain.
		self, err := os.Executable()
		if err != nil {
			return sandbox.Config{}, fmt.Errorf("-allow-host needs this program's path, for the sandbox's network bridge: %w", err)
		}
		sb.Bridge = []string{self, bridgeCommand}
	}
	return sb, nil
}

// hostList is the value of -allow-host and -allow-address: the flag
// repeated, or values separated by commas.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(value string) error {
	for _, host := range strings.Split(value, ",") {
		host = strings.TrimSpace(host)
		if host == "" {
			return fmt.Errorf("an empty entry in %q", value)
		}
		*h = append(*h, host)
	}
	return nil
}

// start begins the periodic flushes of views and the job engine.
func (a *app) start() {
	a.recorder.Start()
	if a.engine != nil {
		a.engine.Start()
	}
}

// close stops what start began and closes the store, after the HTTP server
// has stopped: the engine lets running jobs finish (or hands them back at
// the deadline), the recorder writes the views it holds, then the store
// closes.
func (a *app) close() error {
	var errs []error
	if a.engine != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := a.engine.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping the job engine: %w", err))
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.recorder.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("writing the last page views (%d lost): %w", a.recorder.Stats().Pending, err))
	}
	if err := a.store.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
