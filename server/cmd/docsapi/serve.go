package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/connlimit"
	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/metrics"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// minFlushTime is what the final page-view flush gets even when the grace
// period is spent: views counted but not written are lost.
const minFlushTime = 5 * time.Second

// The HTTP server's fixed bounds (its read timeouts are settings, see
// httpTimeouts): every answer is small or written in pages, so a minute to
// write one is generous.
const (
	writeTimeout   = time.Minute
	maxHeaderBytes = 64 << 10
)

const serveHelp = `Runs the self-hosted API: the HTTP server, the job engine that runs agent
jobs, and the recorder of page views sent to POST /v1/analytics/{project}/views.

Storage is a SQLite database in a folder (--data, the default) or a
PostgreSQL database (--database). The configuration file (--config, JSON)
says how each project's jobs run; its projects are created in the storage if
missing, and their repository, ref and model updated when they changed.
A project whose repository is on this machine (a path or a file:// URL)
must be a git repository with the ref as a branch or tag (or, with no ref,
a default branch): otherwise serve refuses to start and says what to run.
Remote repositories are not checked at start, which needs no network.

Settings come from flags, then the environment (DOCSAPI_LISTEN,
DOCSAPI_METRICS_LISTEN, DOCSAPI_DATA, DOCSAPI_DATABASE_URL, DOCSAPI_CONFIG,
DOCSAPI_SECRET_FILE, DOCSAPI_SECRET), then the configuration file, then the
defaults. Secrets never go in the file: it names the environment variable
(tokenEnv, apiKeyEnv) or the file (tokenFile, apiKeyFile) that holds each.
Relative paths in the file are relative to the file's folder.

SIGINT or SIGTERM stops the server gracefully: it stops accepting requests,
lets those in flight finish, gives running jobs --shutdown-grace to finish
(then hands them back to the queue), writes the page views counted, and
closes the storage. A second signal ends it at once.

The bound address is logged at start ("listening", addr=...), which helps
with --listen 127.0.0.1:0 (any free port).

Several serve processes (replicas) may share one PostgreSQL database. A
job claimed by one stays with it while it sends heartbeats (every third of
engine.leaseFor); one that dies leaves its jobs to the others once
leaseFor has passed. Leases follow the database server's clock, so the
replicas' clocks may be any amount apart without a job running twice;
a step forward of the database server's clock ends every lease early by
as much. Job times shown to people (created, updated) come from the clock
of the replica that wrote them. The processes sharing a SQLite folder are
on one machine, on one clock.

Configuration file (every field but the projects' id, repository, host.kind
and agent.kind is optional):

{
  "listen": "127.0.0.1:8080",
  "metricsListen": "127.0.0.1:9464",
  "maxConnections": 1024,
  "connections": {"perAddress": 128, "waitingPerAddress": 64,
                  "maxPublic": 256, "publicBodyTimeout": "5s",
                  "headerTimeout": "5s", "requestTimeout": "1m", "idleTimeout": "2m"},
  "data": "/var/lib/docsapi",
  "secretFile": "/var/lib/docsapi/secret.key",
  "tls": {"cert": "cert.pem", "key": "key.pem"},
  "log": {"format": "json", "level": "info"},
  "shutdownGrace": "30s",
  "pageViews": {"flushInterval": "10s", "maxKeys": 100000, "maxPathsPerDay": 50000},
  "rateLimits": {"agent": {"requests": 100, "per": "1h"},
                 "analytics": {"requests": 600, "per": "1m"},
                 "ingest": {"requests": 6000, "per": "1m"}},
  "trustedProxies": ["10.0.0.0/8", "2001:db8::1"],
  "site": {"perAddress": {"requests": 60, "per": "1m"}, "maxAddresses": 100000,
           "maxBodyBytes": 65536, "maxFeedbackPerDay": 10000, "maxQueriesPerDay": 10000,
           "maxFeedbackPerAddress": 20, "maxFeedbackPerNetwork": 200,
           "maxQueriesPerAddress": 20, "maxQueriesPerNetwork": 200},
  "dashboard": {"enabled": true, "sessionMaxAge": "12h", "sessionIdleTimeout": "1h"},
  "jobs": {"maxPrompts": 50, "maxPromptCharacters": 128000},
  "engine": {"concurrency": 2, "jobTimeout": "30m", "maxAttempts": 3,
             "leaseFor": "2m", "pollInterval": "5s", "retryDelay": "30s"},
  "git": {"authorName": "Docs Agent", "authorEmail": "docs-agent@example.com",
          "workDir": "/var/tmp/docsapi", "timeout": "10m",
          "env": ["HTTPS_PROXY=http://proxy:3128"],
          "maxPublishFiles": 1000, "maxPublishBytes": 20971520},
  "projects": [
    {
      "id": "handbook", "name": "Handbook",
      "repository": "https://github.com/acme/handbook.git",
      "ref": "main", "model": "claude-sonnet-4-5",
      "host": {"kind": "github", "tokenEnv": "GITHUB_TOKEN", "draft": true},
      "agent": {"kind": "command", "command": "claude",
                "args": ["-p", "--model", "{model}", "--permission-mode", "acceptEdits"],
                "promptVia": "stdin", "timeout": "20m",
                "passEnv": ["ANTHROPIC_API_KEY"],
                "sandbox": {"allowHosts": ["api.anthropic.com"], "readOnly": ["/opt/node"],
                            "maxProcesses": 256, "memory": "2GiB"},
                "maxWorkspaceGrowth": "1GiB", "maxWorkspaceFiles": 200000}
    },
    {
      "id": "api-docs", "repository": "https://gitlab.example.com/acme/api-docs.git",
      "host": {"kind": "gitlab", "baseURL": "https://gitlab.example.com",
               "tokenFile": "/run/secrets/gitlab-token"},
      "agent": {"kind": "llm", "provider": "openai",
                "baseURL": "http://localhost:11434/v1", "model": "qwen3-coder",
                "limits": {"maxTurns": 40, "maxChangedBytes": 200000}}
    },
    {
      "id": "wiki", "repository": "/srv/git/wiki.git",
      "host": {"kind": "push-only"},
      "agent": {"kind": "llm", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "apiKeyEnv": "ANTHROPIC_API_KEY"},
      "assistant": {"provider": "anthropic", "model": "claude-haiku-4-5",
                    "apiKeyEnv": "ANTHROPIC_API_KEY", "maxTokens": 1024,
                    "dailyTokens": 2000000}
    }
  ]
}

host: kind github, gitlab or push-only; baseURL (GitHub Enterprise or
self-managed GitLab), draft, repositoryHosts; the token (tokenEnv or
tokenFile) is required for github and gitlab, and optional for push-only
(with username, for HTTPS remotes). agent: kind command (command, args with
{prompt} {model} {job} {project} {dir}, promptVia stdin|arg, timeout,
maxOutputBytes, passEnv, env, sandbox, maxWorkspaceGrowth, maxWorkspaceFiles)
or kind llm (provider openai|anthropic, baseURL, model,
apiKeyEnv|apiKeyFile, anthropicVersion, instructions, limits: maxTurns,
maxTokens, maxFileBytes, maxChangedBytes, requestTimeout, maxRetries).

assistant (a project's): the model that answers its readers' questions
(POST /discovery/v2/assistant/{domain}/message, under an assistant key):
provider openai|anthropic, model, baseURL, apiKeyEnv|apiKeyFile,
anthropicVersion, maxTokens (an answer's bound), dailyTokens (the project's
tokens a UTC day; past them, 429 until midnight UTC). Absent, a project
whose agent is kind llm answers with its agent's provider, model and key;
another has no assistant (503). The top-level "assistant" bounds every
project's answers: perAddress (an address's questions, 10 a minute),
maxBodyBytes (262144), maxQuestionCharacters (2000), maxContextItems (5),
maxContextCharacters (4000), maxThreadExchanges (20), maxExchangesPerDay
(1000 a project), dailyTokens (2000000, unless the project's own),
maxAnswerTokens (1024); absent or 0 takes the default.

rateLimits: per API key, each category on its own budget; past it, requests
answer 429 with Retry-After. agent: every agent-job request (no limit by
default). analytics: reads, GET /v1/analytics/{project}/views (default 600
per minute). ingest: page views sent to POST /v1/analytics/{project}/views,
up to 1,000 a request (default 6000 requests per minute). A category allows
"requests" per "per", in bursts of up to "requests"; an absent requests
takes the default, an absent per is 1m, and "requests": 0 turns the
category off. Each server process keeps its own budgets.

site: the public endpoints a docs site's pages send feedback and searches
to (POST /v1/site/{project}/feedback and /searches, with a site token).
perAddress is the budget of one client address (an IPv6 client's /64; 60
a minute by default), kept for up to maxAddresses addresses at once;
maxBodyBytes bounds a request's body; maxFeedbackPerDay and
maxQueriesPerDay bound a project's feedback entries and distinct search
queries a UTC day. So that no one can fill those caps for everyone, one
address (an IPv6 client's /64) may take only a share of each, and its
network (IPv4 /24, IPv6 /48) a larger one: maxFeedbackPerAddress and
maxFeedbackPerNetwork bound the feedback one address and one network add to
a project's day (past either, 429 for them, not for others);
maxQueriesPerAddress and maxQueriesPerNetwork bound the searches of one
address or network that add a query or opened result new to the day (past
either, their searches still count, new queries under "(other searches)").
By default a share is a 500th of its cap for an address and a 50th for a
network (20 and 200), so filling a cap takes 500 addresses in 50 networks;
raise them for readers behind one address (an office's NAT) that is not a
trusted proxy. An address must not exceed its network's share, nor a
network the cap. Shares are counted in memory, by each server process on
its own, for the current UTC day; past maxAddresses addresses (or networks)
in a day, the others share one allowance. Absent or 0 takes the default;
none can be turned off. (connections.maxPublic bounds how many site
requests are served at once, below.)

dashboard: web pages under /dashboard/ on the API's listener, on by
default (--dashboard=false or "enabled": false turns them off): a project's
human and AI views over time, its top pages and unique visitors, and its
jobs, with their prompts and, for keys with the write scope, their failure
reasons and an archive button. Signing in takes an API key, which is
exchanged for a session cookie (HttpOnly, SameSite=Strict, Secure over
HTTPS); a session ends after sessionMaxAge (12h) whatever its use, after
sessionIdleTimeout (1h) without use, at sign-out (recorded in the storage,
so a copy of the cookie is refused by every replica and after restarts),
and at once when its key is revoked or expires. A key sees its own projects
only, as through the API.

secretFile (--secret-file, DOCSAPI_SECRET_FILE) names the file of the
server's secret, which seals dashboard sessions and the cursors of the
exports and lists: exactly 32 random bytes, mode 0600 (or stricter), kept
outside the database so that a copy of the database opens nothing.
DOCSAPI_SECRET may hold the same 32 bytes in base64 instead. By default it
is secret.key in the data folder (with PostgreSQL, in the default one:
$XDG_DATA_HOME/docsapi or ~/.local/share/docsapi), made at the first start;
a file named by a setting must exist. serve refuses to start with a secret
file that others may read, of another size, or unreadable. Replicas on one
PostgreSQL database must all have the same secret: give each the same file
or the same DOCSAPI_SECRET. To rotate it, replace it (delete the default
file, or write a new one) and restart every server: every session ends and
every cursor is refused; nothing stored is lost.

maxConnections (--max-connections, default 1024) caps the connections open
at once, and "connections" shares them out. A connection is "waiting" while
it has not sent a whole request's headers: in its TLS handshake, sending
headers, or idle between requests; it is in a request from its complete
headers until its answer is written. One address (an IPv6 client's /64) may
hold at most connections.perAddress connections
(--max-connections-per-address, 128), and at most
connections.waitingPerAddress of them waiting (--max-waiting-per-address,
64): a new connection past either is closed at once, and one going back to
waiting past the second is closed (clients open another when they need one).
When all maxConnections are open, a new connection takes the place of one
that is closing after its answer, or else of the longest-waiting connection
of the address holding the most, if that address holds at least two more
than the newcomer's; otherwise the newcomer is closed. Only while every
connection is in a request do new ones wait, unanswered, in the kernel's
backlog.

Requests anyone may send without a key (the site endpoints, /openapi.yaml,
and every path but /v2/agent/, /v1/analytics/, /dashboard/ and /healthz) are
public: at most connections.maxPublic of them are served at once (a quarter
of maxConnections by default, and always below it); past it, one is answered
503 with Retry-After and its connection closes. A public request's body must
arrive within connections.publicBodyTimeout (5s) of its headers. So one
address or a few, holding connections with slow headers, idle keep-alives,
trickled site bodies or answers they never read, cannot keep API calls, the
dashboard or /healthz out.

A client gets connections.headerTimeout (5s) to finish a TLS handshake and
send a request's headers, connections.requestTimeout (1m) to send the whole
request, and connections.idleTimeout (2m) idle between requests; a request
refused before its body is read (401, 403, 404, 413, 429) closes its
connection rather than wait for the body. Each refusal is counted (with
metricsListen, docsapi_connections_refused_total by reason) and logged the
first time, then at most once a minute per reason.

Connections from trustedProxies are exempt from the per-address bounds:
every client behind a proxy shares its address, so the proxy must bound each
client's connections and requests itself. What no bound here can tell apart
is a flood from many addresses (more than maxConnections divided by
perAddress, each holding requests open, or more than maxPublic, each holding
a public request): that belongs in a proxy, load balancer or firewall in
front, which sees them all.

jobs: the caps on an agent job's prompts, its first and its follow-ups
(POST .../job/{id}/message), which every run hands to the agent whole.
maxPrompts (default 50) caps how many a job holds, maxPromptCharacters
(default 128000, at least 32000) their characters together; a follow-up
past either is answered 400 naming the cap, and not stored. Absent or 0
takes the default; neither can be turned off.

metricsListen (--metrics-listen; off by default) serves GET /metrics in the
Prometheus text format on a listener of its own: requests by route and
status with their latencies, jobs by status and the depth of the queue (read
from the storage at each scrape, for at most 5s), job runs by outcome with
their durations, and page views ingested with the commits that store them.
It asks for no key: give it an address that only the monitoring can reach.

A command agent runs in a bubblewrap sandbox (Linux; Debian package
bubblewrap): it writes only to its workspace and to file systems in memory
of its own, /tmp, /dev/shm and its home (HOME; TMPDIR is /tmp), sees a
read-only /usr and a few files of /etc, cannot see the server's
environment, files or processes, reaches no network, and dies with its run
and with the server. Its PATH is /usr/local/bin:/usr/bin:/bin, after the
bin folder of each readOnly path that has one; the command itself is found
in the server's PATH. sandbox.allowHosts lists hosts it may reach over
HTTPS through a proxy the server runs (host, host:port, *.example.com). The
proxy resolves each name itself and dials only the addresses it checked:
never this machine's or its networks' (loopback, private, shared,
link-local, unique-local, multicast, reserved) nor a cloud metadata service
(169.254.169.254 and others), whether named or written as an address,
unless sandbox.allowAddresses lists them: addresses or CIDR networks, such
as "10.0.0.5" or "10.0.0.0/24" (a metadata address only by itself).
sandbox.readOnly adds host paths it may read (where its runtime lives);
serve refuses one that holds, or lies in, its own files, links resolved:
the data folder and database, the configuration file, the TLS and secret
files, git.workDir (workspaces, mirrors, the agents' runs), and the SSH and
PostgreSQL files of the server's user. sandbox.bwrap names the bubblewrap
program. Where the sandbox cannot run, serve refuses to start unless the
agent says "sandbox": "off", which runs it as the server's user with access
to all the server can read, and with none of the sandbox's limits below
(serve warns at every start).

Each run of a sandboxed agent is bounded: sandbox.maxProcesses (default
256) processes and threads at once; sandbox.memory (default 2GiB) of
memory, the files in its file systems included (past it the kernel kills
its largest process, and the job's error says so); sandbox.tmpSize
(256MiB), sandbox.shmSize (64MiB) and sandbox.homeSize (512MiB) cap /tmp,
/dev/shm and the home, and together must stay below sandbox.memory. Sizes
are bytes, or strings such as "512MiB" or "2GiB". Where the server can make
cgroups (cgroup v2 with the pids and memory controllers delegated, as
systemd's Delegate=yes does; or cgroup v1, the pids and memory hierarchies
writable) each run gets its own, removed after it; elsewhere the process
limit is RLIMIT_NPROC, which counts only the sandbox's processes but binds
nothing when the server runs as root, and memory is bounded only by the
file systems' sizes. serve logs at start which mechanism enforces each
limit ("sandbox limits"), at warn when one is not enforced.

maxWorkspaceGrowth (default 1GiB) and maxWorkspaceFiles (default 200000)
bound what one run of a command agent may add to its workspace, the folder
under git.workDir it edits, sandboxed or not: the disk its files take
(blocks: a sparse file counts what it uses, a file of several names once),
apart from that the sizes of its files (a sparse file counts whole, as git
add would read it), and its files, folders and links. The workspace is
measured before the agent starts and walked while it runs, every second,
and within 50ms of its file system's use growing by a sixteenth of
maxWorkspaceGrowth (ext4, XFS and tmpfs count writes at once; btrfs may
not); a walk follows no link and stops at the limit. Past a limit the
agent and all its processes are killed and the job fails for good, naming
the limit; a workspace past a limit when the agent ends fails the job too,
and nothing is published. Between two checks an agent writes at the disk's
speed: the workspace may pass the limit by what the disk takes in 50ms
plus three walks' time (a walk takes milliseconds in a docs repository,
tenths of a second with 100,000 files), or in a second and a walk where
the file system counts its use late. In the sandbox no file may grow past maxWorkspaceGrowth
(RLIMIT_FSIZE: a tool writing a larger one gets SIGXFSZ or EFBIG, and the
job's error names the setting) and no core dump is written. A walk sees
the tree as it is: an agent that moves a folder across a walk can hide it
until its run ends. Put git.workDir on a file system of its own (or under
a quota), so that no agent can fill the database's disk. Without the
sandbox the workspace is bounded all the same, but the agent can write
anywhere the server can, its HOME and TMPDIR (folders of its run) among
them.

git.maxPublishFiles (default 1000) and git.maxPublishBytes (default
20971520, 20 MiB) bound what a job may publish: the files its branch
changes against its base (added, modified or deleted), and the bytes of
those it adds or changes. A job past either fails, naming the limit and
its numbers, and nothing of it is committed or pushed. Absent or 0 takes
the default.

promptVia arg (or {prompt} in args) puts a job's prompts on the agent's
command line, where every local user of the host can read them while it
runs (/proc/PID/cmdline, ps; the sandbox does not hide them), and serve
warns at every start; a job whose prompts no longer fit in an argument
(128 KiB on Linux) fails, saying so. The default, stdin, has neither
problem.`

const serveExamples = `docsapi serve --config docsapi.json
DOCSAPI_DATABASE_URL=postgres://docsapi@db/docsapi docsapi serve --config docsapi.json --listen :8080
docsapi serve --config docsapi.json --print-config    # check it; secrets are redacted`

func serveCommand() *command {
	return &command{
		name:     "serve",
		summary:  "run the API server, the job engine and the page-view recorder",
		help:     serveHelp,
		examples: serveExamples,
		setup: func(fs *flag.FlagSet) runFunc {
			f := &serveFlags{}
			f.register(fs)
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				return serve(ctx, s, f)
			}
		},
	}
}

func newLogger(w io.Writer, format, level string) *slog.Logger {
	l, _ := parseLevel(level) // checked by resolve
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs the server until ctx ends, then shuts it down in order.
func serve(ctx context.Context, s *stdio, f *serveFlags) error {
	set, err := f.resolve(s.getenv)
	if err != nil {
		return err
	}
	projects, err := resolveProjects(set.file, s.getenv)
	if err != nil {
		return set.inConfig(err)
	}
	if err := checkSandboxPaths(set, s.getenv); err != nil {
		return set.inConfig(err)
	}
	if f.printConfig {
		// The secret is checked, never made, nor printed.
		if _, err := set.loadSecret(s.getenv, false, nil); err != nil {
			return set.inConfig(err)
		}
		return printConfig(s, set)
	}

	log := newLogger(s.stderr, set.logFormat, set.logLevel)
	for _, w := range projects.warnings {
		log.Warn("docsapi: " + w)
	}
	if w := dataDirWarning(set.storage); w != "" {
		log.Warn("docsapi: " + w)
	}

	// Everything that can be checked without the storage is checked first,
	// so a configuration mistake stops the server before it touches data.
	parts, err := buildParts(set.file.Git, projects, log)
	if err != nil {
		return set.inConfig(err)
	}
	if setting, other := checkLocalRepositories(ctx, projects.store, parts); setting != nil || other != nil {
		if setting != nil {
			return set.inConfig(errors.Join(setting, other))
		}
		return other
	}
	var tlsConfig *tls.Config
	if set.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(set.tlsCert, set.tlsKey)
		if err != nil {
			return fmt.Errorf("loading the TLS certificate and key: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	// The secret before the storage: a copy of the database must not be
	// enough to seal a session, so a server without its secret stops here.
	secret, err := set.loadSecret(s.getenv, true, log)
	if err != nil {
		return set.inConfig(err)
	}

	loc := set.storage
	loc.pathCap = set.file.PageViews.MaxPathsPerDay
	st, err := openStore(ctx, loc, true, log)
	if err != nil {
		return err
	}
	closeStore := sync.OnceValue(st.Close)
	defer closeStore()

	engCfg := set.file.Engine.config()
	engCfg.Store, engCfg.Owner, engCfg.Parts, engCfg.Logger = st, engineOwner(), parts, log
	recCfg := set.recorderConfig(st, log)
	srvCfg := set.serverConfig(st, log)
	srvCfg.Secret = secret
	srvCfg.AssistantModel = assistantModels(projects.assistant)
	connCfg := set.connlimitConfig(log)
	var met *metrics.Metrics
	if set.metricsListen != "" {
		if met, err = newServeMetrics(st, log, &engCfg, &recCfg, &srvCfg, &connCfg); err != nil {
			return err
		}
	}
	conns, err := connlimit.New(connCfg)
	if err != nil {
		return set.inConfig(err)
	}
	if err := checkDocsConfig(set.file.Docs); err != nil {
		return set.inConfig(err)
	}
	upd, err := docsupdate.New(docsUpdaterConfig(set.file.Docs, st, parts, projects, log))
	if err != nil {
		return set.inConfig(err)
	}
	// After a completed job, the project's index is refreshed: a hook, so
	// the engine knows nothing of the index.
	engCfg.OnRunEnd = chainRunEnd(engCfg.OnRunEnd, upd.JobRunEnded)
	eng, err := engine.New(engCfg)
	if err != nil {
		return set.inConfig(err)
	}
	rec, err := pageviews.New(recCfg)
	if err != nil {
		return set.inConfig(err)
	}
	srvCfg.PageViews, srvCfg.Jobs, srvCfg.Runs, srvCfg.DocsUpdates = rec, eng, projectRuns(parts), upd
	srv, err := server.New(srvCfg)
	if err != nil {
		return set.inConfig(err)
	}
	if err := syncProjects(ctx, srv, st, projects.store, log); err != nil {
		return set.inFile(err)
	}

	var metricsSrv *http.Server
	if met != nil {
		met.WatchPageViews(rec)
		if metricsSrv, err = serveMetrics(set, met, log); err != nil {
			return err
		}
		defer metricsSrv.Close() // at once if serve ends early; after shutdown, nothing left
	}
	ln, err := net.Listen("tcp", set.listen)
	if err != nil {
		return fmt.Errorf("listening on %s (from %s): %w", set.listen, set.sources["listen"], err)
	}
	// The limiter wraps the TCP listener, so with TLS it counts
	// connections still in their handshake too, as waiting for a request
	// (which the header timeout bounds).
	ln = conns.Listener(ln)
	httpSrv := newHTTPServer(srv, log, set.timeouts)
	httpSrv.TLSConfig = tlsConfig
	conns.Install(httpSrv)
	eng.Start()
	rec.Start()
	// The updater is stopped before the storage closes; an update it runs
	// then is abandoned, and taken over by a replica (or this server once
	// restarted) when its lease lapses.
	updCtx, stopUpdater := context.WithCancel(context.Background())
	updDone := make(chan struct{})
	go func() { defer close(updDone); upd.Run(updCtx); upd.Flush() }()
	defer func() { stopUpdater(); <-updDone }()
	// Conversations past their retention are deleted from the start,
	// then every conversationSweepEvery; replicas sharing the database
	// each sweep, which deletes nothing twice.
	sweepCtx, stopSweeps := context.WithCancel(context.Background())
	sweepDone := make(chan struct{})
	go func() { defer close(sweepDone); srv.RunConversationSweeps(sweepCtx, conversationSweepEvery) }()
	defer func() { stopSweeps(); <-sweepDone }()
	served := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			served <- httpSrv.ServeTLS(ln, "", "")
		} else {
			served <- httpSrv.Serve(ln)
		}
	}()
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	log.Info("docsapi: listening", slog.String("addr", ln.Addr().String()),
		slog.String("url", scheme+"://"+ln.Addr().String()), slog.String("storage", set.storage.describe()),
		slog.String("secret", cmp.Or(set.secretFile, secretEnv)),
		slog.Int("projects", len(projects.store)), slog.String("version", cliVersion()))

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("docsapi: shutting down", slog.Duration("grace", set.grace))
	case serveErr = <-served:
		log.Error("docsapi: the HTTP server stopped", slog.Any("error", serveErr))
	}
	stopUpdater()
	<-updDone
	stopSweeps()
	<-sweepDone
	return shutdown(log, set.grace, []*http.Server{httpSrv, metricsSrv}, eng, rec, srv.IngestStats, closeStore, serveErr)
}

// conversationSweepEvery is how often serve deletes the assistant's
// conversations past their retention: a conversation outlives its
// retention by at most this long.
const conversationSweepEvery = time.Hour

// newHTTPServer is an http.Server for h with serve's timeouts and limits.
// The header timeout bounds a TLS handshake too (net/http gives it the
// shortest of its timeouts).
func newHTTPServer(h http.Handler, log *slog.Logger, t httpTimeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.header,
		ReadTimeout:       t.request,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       t.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// connlimitConfig is the connection limiter's configuration: the
// settings, and the site endpoints as its public requests.
func (set *serveSettings) connlimitConfig(log *slog.Logger) connlimit.Config {
	c := set.conns
	c.Logger = log
	c.Public = isPublicRequest
	return c
}

// isPublicRequest reports whether r is a request anyone may send, which
// the connection limiter bounds apart: every request but those to the
// API's own endpoints (which ask for a key before they read a body or
// answer more than an error), the dashboard's (which ask for a session;
// its sign-in has a budget per address) and the health check (which load
// balancers must reach under any load). So the site endpoints (a body
// from anyone with the token printed in the site's pages), /openapi.yaml
// (the one large answer without a key, which a client that reads it
// slowly holds a connection with) and any endpoint added later without a
// key are public. ServeMux answers a path that is not clean with a
// redirect, reading no body and writing little, so dodging a prefix with
// dots or slashes holds nothing for long.
func isPublicRequest(r *http.Request) bool {
	p := r.URL.Path
	switch {
	case p == "/healthz", strings.HasPrefix(p, "/v2/agent/"), strings.HasPrefix(p, "/v1/analytics/"), strings.HasPrefix(p, "/v1/project/"), strings.HasPrefix(p, "/v1/gaps/"),
		p == "/dashboard", strings.HasPrefix(p, "/dashboard/"):
		return false
	}
	return true
}

// serverConfig is the API's configuration: the settings that bound it.
func (set *serveSettings) serverConfig(st store.Store, log *slog.Logger) server.Config {
	return server.Config{
		Store: st, Logger: log,
		RateLimits: set.rateLimits, TrustedProxies: set.trustedProxies, Site: set.site,
		Assistant:     set.assistant,
		Dashboard:     set.dashboard,
		MaxJobPrompts: set.jobs.MaxPrompts, MaxJobPromptLength: set.jobs.MaxPromptCharacters,
		AssistantRetention: set.file.Assistant.retention(),
	}
}

// recorderConfig is the page-view recorder's configuration: the same
// trusted proxies as the API's, so that a visitor behind them is known by
// its own address, and a client elsewhere cannot choose one.
func (set *serveSettings) recorderConfig(sink pageviews.Sink, log *slog.Logger) pageviews.Config {
	return pageviews.Config{
		Sink: sink, FlushInterval: set.flush, MaxKeys: set.file.PageViews.MaxKeys, Logger: log,
		TrustedProxies: set.trustedProxies,
	}
}

// shutdown stops everything in the order that loses nothing: no new
// requests (on the API's listener and the metrics'), requests and jobs in
// flight finish (within grace), the page views counted so far are written,
// then the storage closes. Its last line counts the page views of both
// ways in: the recorder's and the ingestion endpoint's (ingested).
func shutdown(log *slog.Logger, grace time.Duration, httpSrvs []*http.Server, eng *engine.Engine, rec *pageviews.Recorder, ingested func() server.IngestStats, closeStore func() error, serveErr error) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var wg sync.WaitGroup
	httpErrs := make([]error, len(httpSrvs))
	for i, srv := range httpSrvs {
		if srv == nil {
			continue // no metrics listener
		}
		wg.Go(func() {
			if httpErrs[i] = srv.Shutdown(ctx); httpErrs[i] != nil {
				srv.Close() // the grace is over: cut the remaining connections
			}
		})
	}
	// The engine stops at the same time: all get the whole grace period.
	var engErr error
	wg.Go(func() { engErr = eng.Shutdown(ctx) })
	wg.Wait()
	if httpErr := errors.Join(httpErrs...); httpErr != nil {
		log.Warn("docsapi: requests still running at the end of the grace period were cut", slog.Any("error", httpErr))
	}
	if engErr != nil {
		log.Warn("docsapi: jobs still running at the end of the grace period were handed back to the queue", slog.Any("error", engErr))
	}

	flushCtx, cancelFlush := context.WithTimeout(context.Background(), max(time.Until(deadline(ctx)), minFlushTime))
	defer cancelFlush()
	var errs []error
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("serving: %w", serveErr))
	}
	if err := rec.Close(flushCtx); err != nil {
		errs = append(errs, fmt.Errorf("writing page views: %d views could not be written: %w", rec.Stats().Pending, err))
	}
	if err := closeStore(); err != nil {
		errs = append(errs, fmt.Errorf("closing the storage: %w", err))
	}
	// An ingested view is written before it is counted, so it adds to
	// both figures; page_views_ingested tells the two ways in apart.
	stats, ing := rec.Stats(), ingested()
	log.Info("docsapi: stopped", slog.Int64("page_views_recorded", stats.Recorded+ing.Views),
		slog.Int64("page_views_written", stats.Flushed+ing.Views), slog.Int64("page_views_ingested", ing.Views))
	return errors.Join(errs...)
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// engineOwner names this process in job leases: unique among the engines
// sharing a database, and readable for an operator looking at a stuck job.
func engineOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}
