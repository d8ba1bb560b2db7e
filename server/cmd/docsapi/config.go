package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
)

// fileConfig is the JSON configuration file of serve (and, for the storage
// settings, of the project and key commands). Every field is optional except
// what the projects need. It never holds a secret: tokens and API keys are
// named by the environment variable or the file that holds them.
//
// The field names are the JSON names users write; decodeConfig refuses
// unknown ones, naming them with their path.
type fileConfig struct {
	Listen        string           `json:"listen,omitempty"`
	MetricsListen string           `json:"metricsListen,omitempty"`  // "": no metrics listener
	MaxConns      int              `json:"maxConnections,omitempty"` // 0: defaultMaxConnections
	Data          string           `json:"data,omitempty"`
	Database      string           `json:"database,omitempty"`
	SecretFile    string           `json:"secretFile,omitempty"` // the server's secret: its file, never the secret
	TLS           tlsConfig        `json:"tls,omitzero"`
	Log           logConfig        `json:"log,omitzero"`
	ShutdownGrace duration         `json:"shutdownGrace,omitzero"`
	PageViews     pageViewsConfig  `json:"pageViews,omitzero"`
	RateLimits    rateLimitsConfig `json:"rateLimits,omitzero"`
	// Connections bounds what one address may hold of maxConnections, and
	// how long a request may take to arrive.
	Connections connectionsConfig `json:"connections,omitzero"`
	// TrustedProxies are the addresses or networks (CIDR) of the reverse
	// proxies in front of serve, whose forwarding headers name the client.
	TrustedProxies []string        `json:"trustedProxies,omitempty"`
	Site           siteConfig      `json:"site,omitzero"`
	Dashboard      dashboardConfig `json:"dashboard,omitzero"`
	Jobs           jobsConfig      `json:"jobs,omitzero"`
	Engine         engineConfig    `json:"engine,omitzero"`
	Git            gitConfig       `json:"git,omitzero"`
	// Docs configures the documentation index's updates.
	Docs docsConfig `json:"docs,omitzero"`
	// Assistant bounds the assistant's answers (assistantconfig.go).
	Assistant assistantConfig `json:"assistant,omitzero"`
	Projects  []projectConfig `json:"projects"`
}

type tlsConfig struct {
	Cert string `json:"cert,omitempty"` // PEM certificate chain
	Key  string `json:"key,omitempty"`  // PEM private key
}

type logConfig struct {
	Format string `json:"format,omitempty"` // text or json
	Level  string `json:"level,omitempty"`  // debug, info, warn or error
}

type pageViewsConfig struct {
	FlushInterval duration `json:"flushInterval,omitzero"`
	MaxKeys       int      `json:"maxKeys,omitempty"`
	// MaxPathsPerDay caps the distinct paths a project's UTC day keeps;
	// views of further new paths are counted under "/(other pages)".
	MaxPathsPerDay int `json:"maxPathsPerDay,omitempty"`
}

// siteConfig is "site": the bounds of the public endpoints a docs site's
// pages send feedback and searches to (server.SiteConfig); every field
// absent or 0 takes its default.
type siteConfig struct {
	PerAddress        rateLimit `json:"perAddress,omitzero"`
	MaxAddresses      int       `json:"maxAddresses,omitempty"`
	MaxBodyBytes      int64     `json:"maxBodyBytes,omitempty"`
	MaxFeedbackPerDay int       `json:"maxFeedbackPerDay,omitempty"`
	MaxQueriesPerDay  int       `json:"maxQueriesPerDay,omitempty"`
	// The shares of those caps one address, and one network, may take.
	MaxFeedbackPerAddress int `json:"maxFeedbackPerAddress,omitempty"`
	MaxFeedbackPerNetwork int `json:"maxFeedbackPerNetwork,omitempty"`
	MaxQueriesPerAddress  int `json:"maxQueriesPerAddress,omitempty"`
	MaxQueriesPerNetwork  int `json:"maxQueriesPerNetwork,omitempty"`
}

// connectionsConfig is "connections": connlimit.Config's bounds (of an
// address; of public requests, in flight and their bodies' time), and the
// HTTP server's timeouts; every field absent or 0 takes its default.
type connectionsConfig struct {
	PerAddress        int      `json:"perAddress,omitempty"`
	WaitingPerAddress int      `json:"waitingPerAddress,omitempty"`
	MaxPublic         int      `json:"maxPublic,omitempty"` // default: a quarter of maxConnections
	PublicBodyTimeout duration `json:"publicBodyTimeout,omitzero"`
	HeaderTimeout     duration `json:"headerTimeout,omitzero"`
	RequestTimeout    duration `json:"requestTimeout,omitzero"`
	IdleTimeout       duration `json:"idleTimeout,omitzero"`
}

// dashboardConfig is "dashboard": the web pages under /dashboard/ and
// their sessions (server.DashboardConfig). Enabled is a pointer so that an
// absent value (on) differs from false.
type dashboardConfig struct {
	Enabled     *bool    `json:"enabled,omitempty"`
	MaxAge      duration `json:"sessionMaxAge,omitzero"`
	IdleTimeout duration `json:"sessionIdleTimeout,omitzero"`
}

// rateLimitsConfig is "rateLimits": per API key, agent requests, analytics
// reads and page-view ingestion, each on its own budget. Absent fields take
// serve's defaults (see serveRateLimits).
type rateLimitsConfig struct {
	Agent     rateLimit `json:"agent,omitzero"`
	Analytics rateLimit `json:"analytics,omitzero"`
	Ingest    rateLimit `json:"ingest,omitzero"`
}

// rateLimit allows requests per per. Requests is a pointer so that an
// absent value (the default) differs from 0 (no limit).
type rateLimit struct {
	Requests *int     `json:"requests,omitempty"`
	Per      duration `json:"per,omitzero"`
}

// jobsConfig is "jobs": the caps on an agent job's prompt history
// (server.Config.MaxJobPrompts and MaxJobPromptLength); absent or 0 takes
// the default.
type jobsConfig struct {
	MaxPrompts          int `json:"maxPrompts,omitempty"`
	MaxPromptCharacters int `json:"maxPromptCharacters,omitempty"`
}

type engineConfig struct {
	Concurrency  int      `json:"concurrency,omitempty"`
	JobTimeout   duration `json:"jobTimeout,omitzero"`
	MaxAttempts  int      `json:"maxAttempts,omitempty"`
	LeaseFor     duration `json:"leaseFor,omitzero"`
	PollInterval duration `json:"pollInterval,omitzero"`
	RetryDelay   duration `json:"retryDelay,omitzero"`
}

// docsConfig is "docs": how the documentation index is kept in step with
// the projects' repositories (package docsupdate).
type docsConfig struct {
	// RefreshInterval is how often every project's index is re-read
	// without being asked; absent: 10m; "0s": never (updates then come
	// from the API, after jobs, and for projects never indexed at start).
	RefreshInterval *duration `json:"refreshInterval,omitempty"`
	// Timeout bounds one update (default 10m); LeaseFor is how long a
	// crashed server's update waits before another takes it over (1m).
	Timeout  duration `json:"timeout,omitzero"`
	LeaseFor duration `json:"leaseFor,omitzero"`
	// Retention is how long an ended update's status is kept (168h).
	Retention duration `json:"retention,omitzero"`
}

type gitConfig struct {
	Binary      string   `json:"binary,omitempty"` // the git program; default "git" from PATH
	AuthorName  string   `json:"authorName,omitempty"`
	AuthorEmail string   `json:"authorEmail,omitempty"`
	WorkDir     string   `json:"workDir,omitempty"` // where workspaces are made
	Timeout     duration `json:"timeout,omitzero"`
	Env         []string `json:"env,omitempty"` // KEY=value for git, such as HTTPS_PROXY
	// MirrorIdle: how long a repository's mirror is kept with no job
	// fetching into it (default 720h, 30 days).
	MirrorIdle duration `json:"mirrorIdle,omitzero"`
	// MaxPublishFiles and MaxPublishBytes bound what a job may publish:
	// the files its branch changes against its base, and the bytes of
	// those it adds or changes (gitrepo.Config; 0 takes the default).
	MaxPublishFiles int   `json:"maxPublishFiles,omitempty"`
	MaxPublishBytes int64 `json:"maxPublishBytes,omitempty"`
}

type projectConfig struct {
	ID         string `json:"id"`
	Name       string `json:"name,omitempty"`
	Repository string `json:"repository"`
	Ref        string `json:"ref,omitempty"`
	Model      string `json:"model,omitempty"`
	// Domain is the project's domain identifier, by which the /discovery
	// endpoints (search, page content) address it: a lower-case DNS
	// label, unique across projects. Absent: none.
	Domain string `json:"domain,omitempty"`
	// DocsRoot is the folder of the documentation in the repository
	// ("docs"); absent: its root. DocsExclude names more folders whose
	// files are no pages.
	DocsRoot    string      `json:"docsRoot,omitempty"`
	DocsExclude []string    `json:"docsExclude,omitempty"`
	Host        hostConfig  `json:"host"`
	Agent       agentConfig `json:"agent"`
	// Assistant is the model that answers the project's readers; absent:
	// its agent's, when that is kind llm (assistantconfig.go).
	Assistant *projectAssistantConfig `json:"assistant,omitempty"`
}

type hostConfig struct {
	Kind            string   `json:"kind"` // github, gitlab or push-only
	BaseURL         string   `json:"baseURL,omitempty"`
	Draft           bool     `json:"draft,omitempty"`
	TokenEnv        string   `json:"tokenEnv,omitempty"`
	TokenFile       string   `json:"tokenFile,omitempty"`
	Username        string   `json:"username,omitempty"` // push-only over HTTPS
	RepositoryHosts []string `json:"repositoryHosts,omitempty"`
}

type agentConfig struct {
	Kind string `json:"kind"` // command or llm

	// kind command
	Command        string            `json:"command,omitempty"`
	Args           []string          `json:"args,omitempty"`
	PromptVia      string            `json:"promptVia,omitempty"`
	Timeout        duration          `json:"timeout,omitzero"`
	MaxOutputBytes int               `json:"maxOutputBytes,omitempty"`
	PassEnv        []string          `json:"passEnv,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Sandbox        sandboxConfig     `json:"sandbox,omitzero"`
	// What a run may add to its workspace, sandboxed or not: bytes (disk
	// blocks, and apart the files' sizes) and names.
	MaxWorkspaceGrowth byteSize `json:"maxWorkspaceGrowth,omitempty"`
	MaxWorkspaceFiles  int      `json:"maxWorkspaceFiles,omitempty"`

	// kind llm
	Provider         string    `json:"provider,omitempty"`
	BaseURL          string    `json:"baseURL,omitempty"`
	Model            string    `json:"model,omitempty"`
	APIKeyEnv        string    `json:"apiKeyEnv,omitempty"`
	APIKeyFile       string    `json:"apiKeyFile,omitempty"`
	AnthropicVersion string    `json:"anthropicVersion,omitempty"`
	Instructions     string    `json:"instructions,omitempty"`
	Limits           llmLimits `json:"limits,omitzero"`
}

// sandboxConfig is a command agent's "sandbox": the string "off", which
// runs the agent unsandboxed, or an object that adjusts the sandbox. Absent,
// the sandbox is required. "off" is a word of its own rather than a false
// somewhere, so that running an agent without a sandbox is said in so many
// words.
type sandboxConfig struct {
	Off        bool     `json:"-"`
	AllowHosts []string `json:"allowHosts,omitempty"` // hosts reachable through the proxy
	// AllowAddresses are the addresses, otherwise refused (loopback,
	// private, link-local, metadata...), the proxy may dial for them.
	AllowAddresses []string `json:"allowAddresses,omitempty"`
	ReadOnly       []string `json:"readOnly,omitempty"`     // more host paths, read-only
	Bwrap          string   `json:"bwrap,omitempty"`        // the bubblewrap program
	MaxProcesses   int      `json:"maxProcesses,omitempty"` // processes and threads of a run
	Memory         byteSize `json:"memory,omitempty"`       // memory of a run, its file systems included
	TmpSize        byteSize `json:"tmpSize,omitempty"`      // the size of /tmp
	ShmSize        byteSize `json:"shmSize,omitempty"`      // the size of /dev/shm
	HomeSize       byteSize `json:"homeSize,omitempty"`     // the size of the home
}

// sandboxOff is the one string a "sandbox" field takes.
const sandboxOff = "off"

func (s sandboxConfig) MarshalJSON() ([]byte, error) {
	if s.Off {
		return json.Marshal(sandboxOff)
	}
	type plain sandboxConfig
	return json.Marshal(plain(s))
}

func (s *sandboxConfig) UnmarshalJSON(b []byte) error {
	if err := checkSandboxString(b); err != nil {
		return err
	}
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		*s = sandboxConfig{Off: true}
		return nil
	}
	type plain sandboxConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*s = sandboxConfig(p)
	return nil
}

// checkSandboxString accepts a JSON string only if it is "off".
func checkSandboxString(b []byte) error {
	var word string
	if json.Unmarshal(b, &word) != nil {
		return nil // not a string: an object, checked field by field
	}
	if word != sandboxOff {
		return fmt.Errorf(`%q is not a sandbox setting: write "off" to run the agent without a sandbox, or an object such as {"allowHosts": ["api.anthropic.com"]}`, word)
	}
	return nil
}

type llmLimits struct {
	MaxTurns        int      `json:"maxTurns,omitempty"`
	MaxTokens       int      `json:"maxTokens,omitempty"`
	MaxFileBytes    int64    `json:"maxFileBytes,omitempty"`
	MaxChangedBytes int64    `json:"maxChangedBytes,omitempty"`
	RequestTimeout  duration `json:"requestTimeout,omitzero"`
	MaxRetries      int      `json:"maxRetries,omitempty"`
}

// duration is a time.Duration written as a Go duration string ("30s",
// "20m"), which reads better in a file than nanoseconds.
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(shortDuration(time.Duration(d)))
}

// shortDuration drops the zero units Duration.String writes ("30m0s" is
// "30m"), as a person would write the value in the file.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`want a duration in quotes, such as "30s" or "20m"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`%q is not a duration such as "30s" or "20m"`, s)
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", s)
	}
	*d = duration(v)
	return nil
}

// loadConfigFile reads and checks a configuration file. Relative paths in it
// are resolved against the file's folder, so the file means the same thing
// whatever folder the server is started from.
func loadConfigFile(path string) (*fileConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the configuration file: %w", err)
	}
	cfg, err := decodeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("configuration file %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	cfg.resolvePaths(filepath.Dir(abs))
	return cfg, nil
}

// decodeConfig parses a configuration strictly (package strictjson): a
// syntax error gives its line and column, an unknown field its path, a
// value of the wrong type its path and what is wanted, and a secret
// written into the file is refused without being repeated. Names must be
// written as the fields are: encoding/json would accept "Listen" for
// "listen", but a configuration that means something else than it says is
// worse than an error.
func decodeConfig(data []byte) (*fileConfig, error) {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, errors.New("the file must hold a JSON object")
	}
	var cfg fileConfig
	if err := strictjson.Decode(data, &cfg, strictjson.Options{MatchCase: true, Check: checkConfigValue}); err != nil {
		return nil, configError(err)
	}
	if cfg.PageViews.MaxPathsPerDay < 0 || cfg.PageViews.MaxKeys < 0 {
		return nil, errors.New("pageViews: maxKeys and maxPathsPerDay must not be negative (leave them out for the defaults)")
	}
	if cfg.Git.MaxPublishFiles < 0 {
		return nil, fmt.Errorf("git.maxPublishFiles must be 0 (the default, %d) or more, got %d", gitrepo.DefaultMaxPublishFiles, cfg.Git.MaxPublishFiles)
	}
	if cfg.Git.MaxPublishBytes < 0 {
		return nil, fmt.Errorf("git.maxPublishBytes must be 0 (the default, %d) or more, got %d", gitrepo.DefaultMaxPublishBytes, cfg.Git.MaxPublishBytes)
	}
	if _, err := parseTrustedProxies(cfg.TrustedProxies); err != nil {
		return nil, err
	}
	// Checked whether or not the file's database is the one used: a
	// secret in the file is a mistake either way.
	if cfg.Database != "" {
		if err := checkDatabaseURL(cfg.Database, "database", true); err != nil {
			return nil, err
		}
	}
	return &cfg, nil
}

// checkConfigValue checks the values whose types read themselves (see
// strictjson.Options.Check): durations, sizes, and a sandbox given as a
// string; a sandbox object is walked as its fields.
func checkConfigValue(t reflect.Type, raw []byte) (bool, error) {
	switch t {
	case reflect.TypeFor[duration]():
		var d duration
		return true, d.UnmarshalJSON(raw)
	case reflect.TypeFor[byteSize]():
		var b byteSize
		return true, b.UnmarshalJSON(raw)
	case reflect.TypeFor[sandboxConfig]():
		if bytes.HasPrefix(raw, []byte(`"`)) {
			return true, checkSandboxString(raw)
		}
	}
	return false, nil
}

// configError words an error of strictjson.Decode for the file. A value is
// never repeated, only its kind: it may be a secret in the wrong place.
func configError(err error) error {
	var e *strictjson.Error
	if !errors.As(err, &e) {
		return err
	}
	at := cmp.Or(e.Path, e.Field)
	switch e.Kind {
	case strictjson.Empty:
		return errors.New("the file is empty; it must hold a JSON object")
	case strictjson.Syntax:
		return fmt.Errorf("line %d, column %d: %s", e.Line, e.Column, e.Err.Error())
	case strictjson.Trailing:
		return errors.New("data after the JSON object: the file must hold one object")
	case strictjson.UnknownField:
		where := cmp.Or(e.Path, "top level")
		if target, isSecret := secretFields[e.Field]; isSecret && slices.Contains(e.Known, target+"Env") {
			// The value is not repeated: it is a secret.
			return fmt.Errorf("%s: field %q would put a secret in the file, which is refused: name the environment variable that holds it with %q, or a file with %q",
				where, e.Field, target+"Env", target+"File")
		}
		return fmt.Errorf("%s: unknown field %q%s", where, e.Field, suggest(e.Field, e.Known))
	case strictjson.WrongType:
		switch {
		case at == "":
			return errors.New("the file must hold a JSON object")
		case strings.HasPrefix(e.Value, "number "):
			return fmt.Errorf("%s: want a whole number", at)
		}
		return fmt.Errorf("%s: want %s, got %s", at, kindWanted(e.Want), kindSent(e.Value))
	case strictjson.BadValue:
		if at != "" {
			return fmt.Errorf("%s: %w", at, e.Err)
		}
		return e.Err
	}
	return e.Err // Truncated: encoding/json's "unexpected EOF"
}

// kindSent names a kind of JSON value (strictjson.Error.Value) as the
// file's messages do.
func kindSent(value string) string {
	switch value {
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "array":
		return "an array"
	}
	return "an object"
}

// kindWanted names the JSON value a field of the file's type t takes, as
// the file's messages do.
func kindWanted(t reflect.Type) string {
	if t == reflect.TypeFor[duration]() {
		return `a duration such as "30s"`
	}
	if t == reflect.TypeFor[byteSize]() {
		return `a size such as "512MiB"`
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// secretFields maps a field name people may write by mistake to the field
// that names where the secret lives.
var secretFields = map[string]string{
	"token": "token", "password": "token", "secret": "token", "accessToken": "token",
	"apiKey": "apiKey", "key": "apiKey",
}

// suggest names the known field that differs from k only in case, or lists
// the known fields.
func suggest(k string, known []string) string {
	for _, n := range known {
		if strings.EqualFold(n, k) {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
	}
	names := slices.Clone(known)
	sort.Strings(names)
	return " (known fields: " + strings.Join(names, ", ") + ")"
}

// resolvePaths makes the file's relative paths absolute against dir.
func (c *fileConfig) resolvePaths(dir string) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	abs(&c.Data)
	abs(&c.SecretFile)
	abs(&c.TLS.Cert)
	abs(&c.TLS.Key)
	abs(&c.Git.WorkDir)
	if strings.ContainsRune(c.Git.Binary, filepath.Separator) {
		abs(&c.Git.Binary)
	}
	for i := range c.Projects {
		p := &c.Projects[i]
		abs(&p.Host.TokenFile)
		abs(&p.Agent.APIKeyFile)
		if p.Assistant != nil {
			abs(&p.Assistant.APIKeyFile)
		}
		// A bare program name is looked up in PATH; a path is the file's.
		if strings.ContainsRune(p.Agent.Command, filepath.Separator) {
			abs(&p.Agent.Command)
		}
		for j := range p.Agent.Sandbox.ReadOnly {
			abs(&p.Agent.Sandbox.ReadOnly[j])
		}
		if strings.ContainsRune(p.Agent.Sandbox.Bwrap, filepath.Separator) {
			abs(&p.Agent.Sandbox.Bwrap)
		}
		// A local repository path is relative to the file too; URLs and
		// scp-like "host:path" stay as written.
		if r := p.Repository; r != "" && !strings.Contains(r, "://") && !strings.Contains(r, ":") {
			abs(&p.Repository)
		}
	}
}

// checkDatabaseURL accepts PostgreSQL URLs only. from names where the URL
// came from, for the message; inFile refuses a password, which would be a
// secret in the configuration file.
func checkDatabaseURL(raw, from string, inFile bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		// The URL may hold a password: never repeat it.
		return fmt.Errorf("%s: the database URL cannot be parsed", from)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("%s: the database URL must start with postgres:// (for SQLite, use --data DIR instead)", from)
	}
	if inFile {
		if _, has := u.User.Password(); has || u.Query().Has("password") {
			return fmt.Errorf("%s: the database URL holds a password, a secret the configuration file must not hold: set DOCSAPI_DATABASE_URL instead, or give the password through PGPASSWORD or a .pgpass file", from)
		}
	}
	return nil
}

// redactURL hides a database URL's password, in the user part or the query.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparsable URL, hidden]"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
