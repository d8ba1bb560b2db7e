package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/connlimit"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// This file resolves serve's settings, each with one precedence: flags,
// then the environment, then the configuration file, then the defaults
// (resolve); and prints the result (--print-config).

// Defaults of serve's own settings. The engine's, the page-view recorder's
// and the rate limits' defaults live in their packages.
const (
	defaultListen        = "127.0.0.1:8080"
	defaultLogFormat     = "text"
	defaultLogLevel      = "info"
	defaultShutdownGrace = 30 * time.Second
)

// defaultMaxConnections caps the connections serve holds open at once. Each
// costs a file descriptor, a goroutine and a few KiB of buffers, so 1024 is
// cheap (tens of MiB at most) and far below the descriptors Go's runtime
// allows the process on Linux (it raises the soft limit to the hard one,
// 524288 under systemd), leaving room for the database, git and agents. Real
// clients need far fewer: SDKs and CI jobs keep a few pooled connections each,
// and a reverse proxy multiplexes its clients onto a handful.
const defaultMaxConnections = 1024

// Defaults of the HTTP server's timeouts. A client sends a request's
// headers at once, so the header timeout (which bounds a TLS handshake
// too) is short: a client trickling them holds its connection for that
// long at most. Bodies other than public requests' (whose own bound is
// connlimit.DefaultPublicBodyTimeout) are at most 1 MiB and sent by
// clients with a key, so a minute is generous.
const (
	defaultHeaderTimeout  = 5 * time.Second
	defaultRequestTimeout = time.Minute
	defaultIdleTimeout    = 2 * time.Minute
)

// serveFlags are serve's flags as given.
type serveFlags struct {
	storage                 storageFlags
	listen, tlsCert, tlsKey string
	metricsListen           string
	logFormat, logLevel     string
	grace, flush            time.Duration
	maxConns                int
	perAddress, waitingPer  int
	dashboard               bool
	secretFile              string
	printConfig             bool
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	f.storage.register(fs)
	fs.StringVar(&f.listen, "listen", defaultListen, "`ADDR` to listen on, host:port; port 0 picks a free one (env DOCSAPI_LISTEN)")
	fs.StringVar(&f.metricsListen, "metrics-listen", "", "`ADDR` to serve /metrics on, host:port, apart from the API; off when empty (env DOCSAPI_METRICS_LISTEN)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate chain `FILE`; with --tls-key, serve HTTPS")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key `FILE`")
	fs.StringVar(&f.logFormat, "log-format", defaultLogFormat, "log `FORMAT` on stderr: text or json")
	fs.StringVar(&f.logLevel, "log-level", defaultLogLevel, "log `LEVEL`: debug, info, warn or error")
	fs.DurationVar(&f.grace, "shutdown-grace", defaultShutdownGrace, "how long requests in flight and running jobs get to finish at shutdown")
	fs.DurationVar(&f.flush, "flush-interval", pageviews.DefaultFlushInterval, "how often recorded page views are written to the storage")
	fs.IntVar(&f.maxConns, "max-connections", defaultMaxConnections, "most connections open at once, `N`")
	fs.IntVar(&f.perAddress, "max-connections-per-address", connlimit.DefaultPerAddress, "most connections of one address (IPv6: one /64) open at once, `N`")
	fs.IntVar(&f.waitingPer, "max-waiting-per-address", connlimit.DefaultWaitingPerAddress, "most connections of one address waiting for a request (handshake, headers, idle) at once, `N`")
	fs.BoolVar(&f.dashboard, "dashboard", true, "serve the dashboard under /dashboard/; --dashboard=false turns it off")
	fs.StringVar(&f.secretFile, "secret-file", "", "`FILE` of the secret that seals sessions and cursors, 32 random bytes, mode 0600\n(env DOCSAPI_SECRET_FILE, or DOCSAPI_SECRET holding it in base64; default DATA/secret.key, made if missing)")
	fs.BoolVar(&f.printConfig, "print-config", false, "check the configuration, print it with secrets redacted, and exit")
}

// serveSettings is serve's effective configuration.
type serveSettings struct {
	listen, tlsCert, tlsKey string
	metricsListen           string // "": no metrics
	logFormat, logLevel     string
	grace, flush            time.Duration
	maxConns                int
	conns                   connlimit.Config // with its defaults, without hooks
	timeouts                httpTimeouts
	rateLimits              server.RateLimits
	trustedProxies          []netip.Prefix
	site                    server.SiteConfig // with its defaults
	assistant               server.AssistantConfig
	jobs                    jobsConfig // with its defaults
	dashboard               server.DashboardConfig
	storage                 storage
	configPath              string
	file                    *fileConfig // never nil: empty without a file
	sources                 map[string]string

	// secretFile is the file of the secret that seals sessions and
	// cursors, absolute; "" when DOCSAPI_SECRET holds the secret. It is
	// a path of the server's own, never for a sandbox to see.
	secretFile string
	// secretDefault says secretFile is the default, which serve makes at
	// its first start; a file named by a setting must exist.
	secretDefault bool
}

// resolve applies the precedence flags > environment > file > defaults.
func (f *serveFlags) resolve(getenv func(string) string) (*serveSettings, error) {
	file, path, err := f.storage.loadFile(getenv)
	if err != nil {
		return nil, err
	}
	if file == nil {
		file = &fileConfig{}
	}
	set := &serveSettings{configPath: path, file: file, sources: map[string]string{}}
	fs := f.storage.fs
	pick := func(name, flagName, flagVal, envName, fileVal, def string) string {
		switch {
		case given(fs, flagName):
			set.sources[name] = "--" + flagName
			return flagVal
		case envName != "" && getenv(envName) != "":
			set.sources[name] = envName
			return getenv(envName)
		case fileVal != "":
			set.sources[name] = "configuration file"
			return fileVal
		}
		if def != "" {
			set.sources[name] = "default"
		}
		return def
	}
	pickDur := func(name, flagName string, flagVal time.Duration, fileVal duration, def time.Duration) time.Duration {
		s := pick(name, flagName, flagVal.String(), "", durString(fileVal), def.String())
		d, _ := time.ParseDuration(s) // every candidate is a valid duration
		return d
	}
	set.listen = pick("listen", "listen", f.listen, "DOCSAPI_LISTEN", file.Listen, defaultListen)
	set.metricsListen = pick("metricsListen", "metrics-listen", f.metricsListen, "DOCSAPI_METRICS_LISTEN", file.MetricsListen, "")
	set.tlsCert = pick("tls.cert", "tls-cert", f.tlsCert, "", file.TLS.Cert, "")
	set.tlsKey = pick("tls.key", "tls-key", f.tlsKey, "", file.TLS.Key, "")
	set.logFormat = pick("log.format", "log-format", f.logFormat, "", file.Log.Format, defaultLogFormat)
	set.logLevel = pick("log.level", "log-level", f.logLevel, "", file.Log.Level, defaultLogLevel)
	set.grace = pickDur("shutdownGrace", "shutdown-grace", f.grace, file.ShutdownGrace, defaultShutdownGrace)
	set.flush = pickDur("pageViews.flushInterval", "flush-interval", f.flush, file.PageViews.FlushInterval, pageviews.DefaultFlushInterval)
	pickInt := func(name, flagName string, flagVal, fileVal, def int) int {
		switch {
		case given(fs, flagName):
			set.sources[name] = "--" + flagName
			return flagVal
		case fileVal != 0:
			set.sources[name] = "configuration file"
			return fileVal
		}
		set.sources[name] = "default"
		return def
	}
	set.maxConns = pickInt("maxConnections", "max-connections", f.maxConns, file.MaxConns, defaultMaxConnections)
	set.conns.PerAddress = pickInt("connections.perAddress", "max-connections-per-address", f.perAddress, file.Connections.PerAddress, connlimit.DefaultPerAddress)
	set.conns.WaitingPerAddress = pickInt("connections.waitingPerAddress", "max-waiting-per-address", f.waitingPer, file.Connections.WaitingPerAddress, connlimit.DefaultWaitingPerAddress)
	if set.rateLimits, err = serveRateLimits(file.RateLimits); err != nil {
		return nil, err
	}
	if set.trustedProxies, err = parseTrustedProxies(file.TrustedProxies); err != nil {
		return nil, err
	}
	if set.site, err = serveSite(file.Site); err != nil {
		return nil, err
	}
	if set.assistant, err = serveAssistant(file.Assistant); err != nil {
		return nil, err
	}
	if set.jobs, err = serveJobs(file.Jobs); err != nil {
		return nil, err
	}
	if set.dashboard, err = serveDashboard(f.dashboard, given(fs, "dashboard"), file.Dashboard, set.sources); err != nil {
		return nil, err
	}
	if set.storage, err = f.storage.resolve(getenv, fileOrNil(file, path)); err != nil {
		return nil, err
	}
	set.sources["storage"] = set.storage.from
	if err := set.resolveSecret(f, getenv); err != nil {
		return nil, err
	}

	switch {
	case (set.tlsCert == "") != (set.tlsKey == ""):
		return nil, usagef("TLS needs both a certificate and a key (--tls-cert and --tls-key)")
	case set.logFormat != "text" && set.logFormat != "json":
		return nil, usagef("unknown log format %q: use text or json", set.logFormat)
	case set.grace <= 0:
		return nil, usagef("the shutdown grace must be positive, got %s", set.grace)
	case set.flush <= 0:
		return nil, usagef("the flush interval must be positive, got %s", set.flush)
	case set.maxConns < 1:
		return nil, usagef("maxConnections (from %s) must be at least 1, got %d", set.sources["maxConnections"], set.maxConns)
	}
	if err := set.resolveConnections(file); err != nil {
		return nil, err
	}
	if _, err := parseLevel(set.logLevel); err != nil {
		return nil, err
	}
	if err := checkAddress("listen", set.listen, set.sources["listen"], "127.0.0.1:8080 or :8080"); err != nil {
		return nil, err
	}
	if set.metricsListen != "" {
		if err := checkAddress("metricsListen", set.metricsListen, set.sources["metricsListen"], "127.0.0.1:9464"); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// httpTimeouts are the API's HTTP server's timeouts.
type httpTimeouts struct {
	header, request, idle time.Duration
}

// defaultHTTPTimeouts are the timeouts of a server that has no settings of
// its own (the metrics listener's).
var defaultHTTPTimeouts = httpTimeouts{header: defaultHeaderTimeout, request: defaultRequestTimeout, idle: defaultIdleTimeout}

// resolveConnections checks the per-address bounds (picked in resolve,
// with their sources), and reads the rest of "connections" into set.conns
// and set.timeouts, defaults filled in.
func (set *serveSettings) resolveConnections(file *fileConfig) error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"connections.perAddress", set.conns.PerAddress},
		{"connections.waitingPerAddress", set.conns.WaitingPerAddress},
	} {
		if f.v < 1 {
			return usagef("%s (from %s) must be at least 1, got %d", f.name, set.sources[f.name], f.v)
		}
	}
	c := file.Connections
	switch {
	case c.MaxPublic < 0:
		return usagef("connections.maxPublic must be 0 (the default: a quarter of maxConnections) or more, got %d", c.MaxPublic)
	case c.MaxPublic >= set.maxConns && set.maxConns > 1:
		return usagef("connections.maxPublic (%d) must be below maxConnections (%d, from %s), so that public requests cannot take every connection from API calls and the dashboard",
			c.MaxPublic, set.maxConns, set.sources["maxConnections"])
	}
	set.conns.Max = set.maxConns
	set.conns.TrustedProxies = set.trustedProxies
	set.conns.MaxPublic = c.MaxPublic
	set.conns.PublicBodyTimeout = time.Duration(c.PublicBodyTimeout)
	conns, err := set.conns.WithDefaults()
	if err != nil {
		return usagef("%v", err) // every field was checked above: a bug
	}
	// WithDefaults gives a logger and a clock, which serve sets itself.
	conns.Logger, conns.Now = nil, nil
	set.conns = conns
	set.timeouts = defaultHTTPTimeouts
	for _, t := range []struct {
		v   *time.Duration
		set duration
	}{
		{&set.timeouts.header, c.HeaderTimeout},
		{&set.timeouts.request, c.RequestTimeout},
		{&set.timeouts.idle, c.IdleTimeout},
	} {
		if t.set != 0 { // the file's durations are never negative
			*t.v = time.Duration(t.set)
		}
	}
	if set.timeouts.header > set.timeouts.request {
		return usagef("connections.headerTimeout (%s) must not be longer than connections.requestTimeout (%s), which bounds the headers and the body together",
			set.timeouts.header, set.timeouts.request)
	}
	return nil
}

// checkAddress refuses the address of the setting name, given by from,
// unless it is host:port.
func checkAddress(name, addr, from, example string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usagef("%s address %q (from %s) must be host:port, such as %s", name, addr, from, example)
	}
	return nil
}

// defaultRatePer is the period of a rate limit whose "per" is not given.
const defaultRatePer = time.Minute

// serveRateLimits applies serve's defaults (server.DefaultRateLimits) to the
// configuration's rateLimits: a category's absent requests takes its
// default, an absent per is a minute, and "requests": 0 turns it off.
func serveRateLimits(c rateLimitsConfig) (server.RateLimits, error) {
	def := server.DefaultRateLimits()
	one := func(name string, c rateLimit, def server.Limit) (server.Limit, error) {
		n := def.Requests
		if c.Requests != nil {
			n = *c.Requests
		}
		switch {
		case n < 0:
			return server.Limit{}, usagef("rateLimits.%s.requests must be 0 (no limit) or more, got %d", name, n)
		case n == 0:
			return server.Limit{}, nil
		}
		per := time.Duration(c.Per)
		if per == 0 {
			per = defaultRatePer
		}
		return server.Limit{Requests: n, Per: per}, nil
	}
	var out server.RateLimits
	var err error
	if out.Agent, err = one("agent", c.Agent, def.Agent); err != nil {
		return out, err
	}
	if out.Analytics, err = one("analytics", c.Analytics, def.Analytics); err != nil {
		return out, err
	}
	out.Ingest, err = one("ingest", c.Ingest, def.Ingest)
	return out, err
}

// serveSite reads the configuration's "site" into the server's, with the
// defaults filled in. Unlike a rate limit, a site budget cannot be turned
// off: those endpoints take requests from anyone.
func serveSite(c siteConfig) (server.SiteConfig, error) {
	var out server.SiteConfig
	if c.PerAddress.Requests != nil || c.PerAddress.Per != 0 {
		def := server.DefaultSitePerAddress()
		out.PerAddress = def
		if c.PerAddress.Requests != nil {
			out.PerAddress.Requests = *c.PerAddress.Requests
		}
		if c.PerAddress.Per != 0 {
			out.PerAddress.Per = time.Duration(c.PerAddress.Per)
		}
		if out.PerAddress.Requests < 1 || out.PerAddress.Per <= 0 {
			return out, usagef("site.perAddress needs requests of 1 or more and a positive per, got %d per %s", out.PerAddress.Requests, out.PerAddress.Per)
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"maxAddresses", int64(c.MaxAddresses)},
		{"maxBodyBytes", c.MaxBodyBytes},
		{"maxFeedbackPerDay", int64(c.MaxFeedbackPerDay)},
		{"maxQueriesPerDay", int64(c.MaxQueriesPerDay)},
		{"maxFeedbackPerAddress", int64(c.MaxFeedbackPerAddress)},
		{"maxFeedbackPerNetwork", int64(c.MaxFeedbackPerNetwork)},
		{"maxQueriesPerAddress", int64(c.MaxQueriesPerAddress)},
		{"maxQueriesPerNetwork", int64(c.MaxQueriesPerNetwork)},
	} {
		if f.v < 0 {
			return out, usagef("site.%s must be 0 (the default) or more, got %d", f.name, f.v)
		}
	}
	out.MaxAddresses, out.MaxBodyBytes = c.MaxAddresses, c.MaxBodyBytes
	out.MaxFeedbackPerDay, out.MaxQueriesPerDay = c.MaxFeedbackPerDay, c.MaxQueriesPerDay
	out.MaxFeedbackPerAddress, out.MaxFeedbackPerNetwork = c.MaxFeedbackPerAddress, c.MaxFeedbackPerNetwork
	out.MaxQueriesPerAddress, out.MaxQueriesPerNetwork = c.MaxQueriesPerAddress, c.MaxQueriesPerNetwork
	if err := checkSiteShares(out); err != nil {
		return out, err
	}
	return out.WithDefaults()
}

// checkSiteShares checks that each share of a daily cap fits in the next
// (an address in its network, a network in the day), with the defaults of
// the absent ones, naming the configuration's keys.
func checkSiteShares(c server.SiteConfig) error {
	for _, sh := range []struct {
		kind                string
		dailyCap, addr, net int
		defaultCap          int
	}{
		{"Feedback", c.MaxFeedbackPerDay, c.MaxFeedbackPerAddress, c.MaxFeedbackPerNetwork, store.DefaultDailyFeedbackCap},
		{"Queries", c.MaxQueriesPerDay, c.MaxQueriesPerAddress, c.MaxQueriesPerNetwork, store.DefaultDailyQueryCap},
	} {
		dailyCap := cmp.Or(sh.dailyCap, sh.defaultCap)
		defAddr, defNet := server.SiteShareDefaults(dailyCap)
		addr, net := cmp.Or(sh.addr, defAddr), cmp.Or(sh.net, defNet)
		switch {
		case addr > net:
			return usagef("site.max%[1]sPerAddress (%[2]d) must not be more than site.max%[1]sPerNetwork (%[3]d): an address is part of its network", sh.kind, addr, net)
		case net > dailyCap:
			return usagef("site.max%[1]sPerNetwork (%[2]d) must not be more than site.max%[1]sPerDay (%[3]d)", sh.kind, net, dailyCap)
		}
	}
	return nil
}

// serveDashboard reads whether the dashboard is served (the flag over the
// file; on by default) and its sessions' bounds (the file's, else the
// server's defaults).
func serveDashboard(flagOn, flagGiven bool, c dashboardConfig, sources map[string]string) (server.DashboardConfig, error) {
	out := server.DashboardConfig{Enabled: true, MaxAge: time.Duration(c.MaxAge), IdleTimeout: time.Duration(c.IdleTimeout)}
	switch {
	case flagGiven:
		out.Enabled, sources["dashboard.enabled"] = flagOn, "--dashboard"
	case c.Enabled != nil:
		out.Enabled, sources["dashboard.enabled"] = *c.Enabled, "configuration file"
	default:
		sources["dashboard.enabled"] = "default"
	}
	// The file's durations are never negative (the parser refuses them).
	return out.WithDefaults()
}

// serveJobs reads the configuration's "jobs" with the server's defaults
// filled in. The caps cannot be turned off: every run hands a job's whole
// history to its agent.
func serveJobs(c jobsConfig) (jobsConfig, error) {
	switch {
	case c.MaxPrompts < 0:
		return c, usagef("jobs.maxPrompts must be 0 (the default, %d) or more, got %d", server.DefaultMaxJobPrompts, c.MaxPrompts)
	case c.MaxPromptCharacters < 0:
		return c, usagef("jobs.maxPromptCharacters must be 0 (the default, %d) or more, got %d", server.DefaultMaxJobPromptLength, c.MaxPromptCharacters)
	case c.MaxPromptCharacters > 0 && c.MaxPromptCharacters < server.DefaultMaxPromptLength:
		return c, usagef("jobs.maxPromptCharacters is %d, below the %d characters one prompt may have: a job could be created with a prompt longer than its whole history may be", c.MaxPromptCharacters, server.DefaultMaxPromptLength)
	}
	if c.MaxPrompts == 0 {
		c.MaxPrompts = server.DefaultMaxJobPrompts
	}
	if c.MaxPromptCharacters == 0 {
		c.MaxPromptCharacters = server.DefaultMaxJobPromptLength
	}
	return c, nil
}

// printedLimit writes an effective limit as the file would: "requests": 0
// for none.
func printedLimit(l server.Limit) rateLimit {
	n := l.Requests
	return rateLimit{Requests: &n, Per: duration(l.Per)}
}

func fileOrNil(file *fileConfig, path string) *fileConfig {
	if path == "" {
		return nil
	}
	return file
}

func durString(d duration) string {
	if d == 0 {
		return ""
	}
	return time.Duration(d).String()
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, usagef("unknown log level %q: use debug, info, warn or error", s)
	}
	return l, nil
}

// inConfig marks err as a mistake in the configuration (exit code 2), naming
// the configuration file it is in, if any.
func (set *serveSettings) inConfig(err error) error {
	return &usageError{err: set.inFile(err)}
}

// inFile names the configuration file, if any, in front of err.
func (set *serveSettings) inFile(err error) error {
	if set.configPath == "" {
		return err
	}
	return fmt.Errorf("configuration file %s: %w", set.configPath, err)
}

// printConfig prints the effective configuration in the file's own format
// (so it can serve as a starting point), with the defaults filled in and the
// secrets redacted; where each setting came from goes to stderr.
func printConfig(s *stdio, set *serveSettings) error {
	eff := *set.file
	eff.Listen, eff.MetricsListen = set.listen, set.metricsListen
	eff.Data, eff.Database = set.storage.dataDir, ""
	eff.SecretFile = set.secretFile
	if set.storage.database != "" {
		eff.Database = redactURL(set.storage.database)
	}
	eff.TLS = tlsConfig{Cert: set.tlsCert, Key: set.tlsKey}
	eff.Log = logConfig{Format: set.logFormat, Level: set.logLevel}
	eff.ShutdownGrace = duration(set.grace)
	eff.MaxConns = set.maxConns
	eff.Connections = connectionsConfig{
		PerAddress: set.conns.PerAddress, WaitingPerAddress: set.conns.WaitingPerAddress,
		MaxPublic: set.conns.MaxPublic, PublicBodyTimeout: duration(set.conns.PublicBodyTimeout),
		HeaderTimeout: duration(set.timeouts.header), RequestTimeout: duration(set.timeouts.request), IdleTimeout: duration(set.timeouts.idle),
	}
	eff.RateLimits = rateLimitsConfig{
		Agent:     printedLimit(set.rateLimits.Agent),
		Analytics: printedLimit(set.rateLimits.Analytics),
		Ingest:    printedLimit(set.rateLimits.Ingest),
	}
	eff.PageViews.FlushInterval = duration(set.flush)
	eff.Site = siteConfig{
		PerAddress:   printedLimit(set.site.PerAddress),
		MaxAddresses: set.site.MaxAddresses, MaxBodyBytes: set.site.MaxBodyBytes,
		MaxFeedbackPerDay: set.site.MaxFeedbackPerDay, MaxQueriesPerDay: set.site.MaxQueriesPerDay,
		MaxFeedbackPerAddress: set.site.MaxFeedbackPerAddress, MaxFeedbackPerNetwork: set.site.MaxFeedbackPerNetwork,
		MaxQueriesPerAddress: set.site.MaxQueriesPerAddress, MaxQueriesPerNetwork: set.site.MaxQueriesPerNetwork,
	}
	eff.Jobs = set.jobs
	if a, err := set.assistant.WithDefaults(set.site.MaxAddresses); err == nil {
		eff.Assistant = assistantConfig{
			PerAddress: printedLimit(a.AskPerAddress), MaxBodyBytes: a.MaxAskBodyBytes,
			MaxQuestionCharacters: a.MaxQuestionLength, MaxContextItems: a.MaxContextItems, MaxContextCharacters: a.MaxContextLength,
			MaxThreadExchanges: a.MaxThreadExchanges, MaxExchangesPerDay: a.MaxExchangesPerDay,
			DailyTokens: a.DailyTokens, MaxAnswerTokens: a.MaxAnswerTokens,
		}
	}
	eff.Dashboard = dashboardConfig{Enabled: &set.dashboard.Enabled, MaxAge: duration(set.dashboard.MaxAge), IdleTimeout: duration(set.dashboard.IdleTimeout)}
	if eff.PageViews.MaxKeys == 0 {
		eff.PageViews.MaxKeys = pageviews.DefaultMaxKeys
	}
	if eff.PageViews.MaxPathsPerDay == 0 {
		eff.PageViews.MaxPathsPerDay = store.DefaultDailyPathCap
	}
	eff.Engine = fileEngineConfig(set.file.Engine.config().WithDefaults())
	if eff.Git.MaxPublishFiles == 0 {
		eff.Git.MaxPublishFiles = gitrepo.DefaultMaxPublishFiles
	}
	if eff.Git.MaxPublishBytes == 0 {
		eff.Git.MaxPublishBytes = gitrepo.DefaultMaxPublishBytes
	}
	// Values of environment variables given to git and agents may be
	// credentials (a proxy's password, say): only their names are shown.
	eff.Git.Env = redactEnvList(eff.Git.Env)
	eff.Projects = make([]projectConfig, len(set.file.Projects))
	for i, p := range set.file.Projects {
		if len(p.Agent.Env) > 0 {
			env := make(map[string]string, len(p.Agent.Env))
			for k := range p.Agent.Env {
				env[k] = redacted
			}
			p.Agent.Env = env
		}
		if p.Agent.Kind == "command" {
			w := p.Agent.workspaceLimits().WithDefaults()
			p.Agent.MaxWorkspaceGrowth, p.Agent.MaxWorkspaceFiles = byteSize(w.MaxGrowth), w.MaxFiles
		}
		if p.Agent.Kind == "command" && !p.Agent.Sandbox.Off {
			l := p.Agent.Sandbox.limits().WithDefaults()
			p.Agent.Sandbox.MaxProcesses, p.Agent.Sandbox.Memory = l.MaxProcesses, byteSize(l.Memory)
			p.Agent.Sandbox.TmpSize, p.Agent.Sandbox.ShmSize, p.Agent.Sandbox.HomeSize = byteSize(l.TmpSize), byteSize(l.ShmSize), byteSize(l.HomeSize)
		}
		eff.Projects[i] = p
	}
	out, err := json.MarshalIndent(eff, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(s.stdout, "%s\n", out)
	if set.configPath != "" {
		fmt.Fprintf(s.stderr, "configuration file: %s\n", set.configPath)
	}
	for _, k := range sortedKeys(set.sources) {
		fmt.Fprintf(s.stderr, "%s: from %s\n", k, set.sources[k])
	}
	fmt.Fprintln(s.stderr, "the configuration is valid; the secrets it names are set")
	return nil
}

const redacted = "[redacted]"

func redactEnvList(env []string) []string {
	if len(env) == 0 {
		return nil
	}
	out := make([]string, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out[i] = k + "=" + redacted
	}
	return out
}

// config is the file's engine settings as the engine takes them; zero
// values stand for the engine's defaults.
func (e engineConfig) config() engine.Config {
	return engine.Config{
		Concurrency: e.Concurrency, JobTimeout: time.Duration(e.JobTimeout), MaxAttempts: e.MaxAttempts,
		LeaseFor: time.Duration(e.LeaseFor), PollInterval: time.Duration(e.PollInterval), RetryDelay: time.Duration(e.RetryDelay),
	}
}

// fileEngineConfig is the engine's settings as the file writes them.
func fileEngineConfig(c engine.Config) engineConfig {
	return engineConfig{
		Concurrency: c.Concurrency, JobTimeout: duration(c.JobTimeout), MaxAttempts: c.MaxAttempts,
		LeaseFor: duration(c.LeaseFor), PollInterval: duration(c.PollInterval), RetryDelay: duration(c.RetryDelay),
	}
}

// parseTrustedProxies parses "trustedProxies": addresses (one host each)
// and networks in CIDR notation.
func parseTrustedProxies(entries []string) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for i, e := range entries {
		if p, err := netip.ParsePrefix(e); err == nil {
			nets = append(nets, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("trustedProxies[%d]: %q is neither an IP address nor a network in CIDR notation (such as 10.0.0.0/8)", i, e)
		}
		a = a.Unmap()
		nets = append(nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return nets, nil
}
