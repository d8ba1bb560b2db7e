// Package llm is an agent that edits documentation by running a language
// model in a tool-use loop: the model is given file tools confined to the
// job's workspace (list_files, read_file, search, write_file, edit_file,
// delete_file) and calls them until it answers without a tool call.
//
// Two wire formats are spoken, with no SDK: OpenAI-compatible chat
// completions (POST {BaseURL}/chat/completions, which OpenAI, Azure
// deployments behind a gateway, vLLM, Ollama, LiteLLM and others accept) and
// the Anthropic Messages API (POST {BaseURL}/v1/messages).
//
// # What the model is sent
//
// The system message is SystemPrompt, followed by Config.Instructions when
// set. The one user message is built from the job's prompts: a job with one
// prompt sends it unchanged; a job with follow-ups sends the earlier prompts
// as context and the newest last:
//
//	Earlier instructions of this job, oldest first. They were given before
//	and their changes, if any, are already in the files; they are context
//	only:
//
//	[Instruction 1]
//	<first prompt>
//
//	Carry out this new instruction now:
//
//	<newest prompt>
//
// # How a run ends
//
// A run succeeds when the model answers without a tool call. It fails with
// an engine.Permanent error when the model refuses, when it still calls
// tools after MaxTurns requests, when its changes would pass
// MaxChangedBytes, and when the provider rejects the request (400, 401,
// 403, 404 and other 4xx but 408 and 429). Rate limits (429), 408 and 5xx
// answers and network errors are retried a few times, honouring
// Retry-After; if they persist, the error is not permanent and the engine
// tries the job again later. A tool call the workspace refuses (a path out
// of the workspace, with a symbolic link or a .git folder in any of its
// components, a failed edit) is answered to the model as an error result,
// for it to correct, and does not end the run.
//
// The API key is never logged and never appears in an error, even when the
// provider quotes it back.
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/internal/prompt"
	"github.com/docsapi/docsapi-go/server/agent/internal/tools"
	"github.com/docsapi/docsapi-go/server/engine"
)

// Provider names a wire format.
type Provider string

// The providers.
const (
	// OpenAI speaks chat completions with function tools.
	OpenAI Provider = "openai"
	// Anthropic speaks the Messages API with tool_use blocks.
	Anthropic Provider = "anthropic"
)

// Defaults of Config.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultAnthropicVersion = "2023-06-01"
	DefaultMaxTurns         = 50
	DefaultMaxTokens        = 8192
	DefaultMaxFileBytes     = tools.DefaultMaxFileBytes
	DefaultMaxChangedBytes  = tools.DefaultMaxChangedBytes
	DefaultRequestTimeout   = 5 * time.Minute
	DefaultMaxRetries       = 2
	DefaultRetryDelay       = time.Second
	DefaultMaxRetryDelay    = 30 * time.Second
)

// SystemPrompt is the start of the system message of every run.
const SystemPrompt = `You are a documentation agent. You work in a checked-out Git repository that holds a documentation site, and you carry out the user's instruction by changing its files with the tools you are given. You cannot run commands; the tools are your only way to see and change the repository.

How to work:
- Explore first: use list_files and search to find the pages concerned, and read_file to read a file before you change it.
- Change existing files with edit_file: old_string must be copied exactly from the file and occur exactly once. Use write_file to create a file or to rewrite a short one, and delete_file only when the instruction calls for removing a file.
- Follow the conventions of the existing pages: format (Markdown or MDX), front matter, headings, links, and navigation or configuration files (such as docs.json or mint.json) that list the pages.
- Paths are relative to the repository root and use forward slashes. The .git folder is off limits, and symbolic links are never followed.
- Keep the changes to what the instruction asks for.
- A tool answer that starts with "Error:" or is marked as an error means the call did nothing; correct the call and go on.

Your changes are proposed for review as a pull request when you finish. Nobody answers questions during the run, so do not ask any. When you are done, answer with a short summary of the changes and no tool call. If the instruction cannot or should not be carried out, change nothing and explain why.`

// Config configures an Agent. Provider is required, and so is a model:
// Config.Model or the task's.
type Config struct {
	// Provider is OpenAI or Anthropic.
	Provider Provider
	// BaseURL is the API's root: for OpenAI-compatible servers the part
	// before /chat/completions (default DefaultOpenAIBaseURL), for
	// Anthropic the part before /v1/messages (default
	// DefaultAnthropicBaseURL).
	BaseURL string
	// Model is used when the task names none. The engine passes the job's
	// model in the task, which is the project's configured model, so that
	// the job's model field reports the model actually used; Task.Model
	// therefore wins over this one.
	Model string
	// APIKey is sent as "Authorization: Bearer" (OpenAI) or "x-api-key"
	// (Anthropic); empty sends neither, for local servers that need no
	// key. The library never reads it from the environment.
	APIKey string
	// AnthropicVersion is the anthropic-version header; default
	// DefaultAnthropicVersion.
	AnthropicVersion string
	// Instructions are appended to the system prompt, for a project's own
	// rules (style guide, where pages go).
	Instructions string
	// MaxTurns bounds the requests to the model in one run; default
	// DefaultMaxTurns.
	MaxTurns int
	// MaxTokens bounds each Anthropic answer (the Messages API requires
	// it); default DefaultMaxTokens. OpenAI requests carry no bound, since
	// compatible servers disagree on the field's name.
	MaxTokens int
	// MaxFileBytes bounds a file read, searched, edited or written; default
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxChangedBytes bounds the bytes removed plus added by a run; default
	// DefaultMaxChangedBytes.
	MaxChangedBytes int64
	// RequestTimeout bounds one HTTP attempt, reading the answer included;
	// default DefaultRequestTimeout. A streamed Chat answer may take longer
	// than that as a whole: there it bounds the wait for the answer's first
	// byte and then each silence between two lines of the stream.
	RequestTimeout time.Duration
	// MaxRetries bounds the retries of one request after a rate limit, a
	// server error or a network error; default DefaultMaxRetries, and a
	// negative value means none.
	MaxRetries int
	// RetryDelay is the first backoff delay, doubled on each retry with
	// jitter up to MaxRetryDelay; defaults DefaultRetryDelay and
	// DefaultMaxRetryDelay. A Retry-After header replaces the backoff; one
	// that asks for more than MaxRetryDelay ends the request at once.
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	// HTTPClient sends the requests; default a client with
	// http.DefaultTransport. Redirects are never followed, whichever client
	// is used, so the key cannot be forwarded to another host. Its Timeout
	// is not applied to Chat, whose streams RequestTimeout bounds instead.
	HTTPClient *http.Client
	// Logger receives metadata of the run (turns, tools called, tokens,
	// retries), never the key, the prompts or file contents. The default
	// discards them.
	Logger *slog.Logger
}

// String describes the configuration with the API key redacted, so that a
// configuration printed or logged by mistake does not leak it.
func (c Config) String() string {
	c.APIKey = redactedKey(c.APIKey)
	type plain Config // without methods, so that %+v does not recurse
	return fmt.Sprintf("%+v", plain(c))
}

// GoString is String, for %#v.
func (c Config) GoString() string { return c.String() }

// LogValue logs the configuration with the API key redacted.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

func redactedKey(key string) string {
	if key == "" {
		return ""
	}
	return "[redacted]"
}

// Agent runs the tool-use loop, and streams answers without tools (Chat).
// It is safe for concurrent use: each Run has its own conversation and
// workspace, each Chat its own stream.
type Agent struct {
	cfg    Config
	base   string
	client *http.Client
	// streamClient is client without its Timeout, which would cut a long
	// but healthy stream.
	streamClient *http.Client
	log          *slog.Logger
	system       string
}

var _ engine.Agent = (*Agent)(nil)

// New checks cfg, applies the defaults and returns an Agent.
func New(cfg Config) (*Agent, error) {
	switch cfg.Provider {
	case OpenAI:
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultOpenAIBaseURL
		}
	case Anthropic:
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultAnthropicBaseURL
		}
		if cfg.AnthropicVersion == "" {
			cfg.AnthropicVersion = DefaultAnthropicVersion
		}
	default:
		return nil, fmt.Errorf("llm agent: Provider %q is neither %q nor %q", cfg.Provider, OpenAI, Anthropic)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm agent: BaseURL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.MaxTurns < 0 || cfg.MaxTokens < 0 || cfg.MaxFileBytes < 0 || cfg.MaxChangedBytes < 0 ||
		cfg.RequestTimeout < 0 || cfg.RetryDelay < 0 || cfg.MaxRetryDelay < 0 {
		return nil, errors.New("llm agent: limits and durations must not be negative")
	}
	setDefault(&cfg.MaxTurns, DefaultMaxTurns)
	setDefault(&cfg.MaxTokens, DefaultMaxTokens)
	setDefault(&cfg.MaxFileBytes, DefaultMaxFileBytes)
	setDefault(&cfg.MaxChangedBytes, DefaultMaxChangedBytes)
	setDefault(&cfg.RequestTimeout, DefaultRequestTimeout)
	setDefault(&cfg.MaxRetries, DefaultMaxRetries)
	setDefault(&cfg.RetryDelay, DefaultRetryDelay)
	setDefault(&cfg.MaxRetryDelay, DefaultMaxRetryDelay)
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	client := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	system := SystemPrompt
	if s := strings.TrimSpace(cfg.Instructions); s != "" {
		system += "\n\nInstructions of this project:\n" + s
	}
	streamClient := *client
	streamClient.Timeout = 0
	return &Agent{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), client: client, streamClient: &streamClient, log: log, system: system}, nil
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// call is one tool call of the model.
type call struct {
	ID, Name string
	Input    []byte
}

// reply is one answer of the model.
type reply struct {
	calls []call
	// refusal is set when the model declined the request.
	refusal string
	// stop is the provider's reason for ending the answer.
	stop          string
	inTok, outTok int
}

// conversation is the history of a run in one provider's format.
type conversation interface {
	// next sends the history and appends the model's answer to it.
	next(ctx context.Context) (reply, error)
	// answer appends the results of the answer's calls, in their order.
	answer(calls []call, results []tools.Result)
}

// Run carries out the task's prompts in task.Dir.
func (a *Agent) Run(ctx context.Context, task engine.Task) error {
	return a.scrub(a.run(ctx, task))
}

func (a *Agent) run(ctx context.Context, task engine.Task) error {
	if len(task.Prompts) == 0 {
		return engine.Permanent(errors.New("llm agent: the task has no prompt"))
	}
	model := task.Model
	if model == "" {
		model = a.cfg.Model
	}
	if model == "" {
		return engine.Permanent(errors.New("llm agent: neither the task nor the configuration names a model"))
	}
	ws, err := tools.Open(task.Dir, tools.Limits{MaxFileBytes: a.cfg.MaxFileBytes, MaxChangedBytes: a.cfg.MaxChangedBytes})
	if err != nil {
		return fmt.Errorf("llm agent: %w", err)
	}
	defer ws.Close()

	log := a.log.With(slog.String("job_id", task.JobID), slog.String("provider", string(a.cfg.Provider)), slog.String("model", model))
	user := prompt.Format(task.Prompts)
	var conv conversation
	if a.cfg.Provider == OpenAI {
		conv = newOpenAI(a, model, user, log)
	} else {
		conv = newAnthropic(a, model, user, log)
	}

	start := time.Now()
	var inTok, outTok, calls int
	summary := func(msg string, turns int) {
		log.Info(msg, slog.Int("turns", turns), slog.Int("tool_calls", calls), slog.Int64("changed_bytes", ws.Changed()),
			slog.Int("input_tokens", inTok), slog.Int("output_tokens", outTok), slog.Duration("duration", time.Since(start)))
	}
	for turn := 1; ; turn++ {
		r, err := conv.next(ctx)
		if err != nil {
			summary("llm agent: run failed", turn)
			return err
		}
		inTok, outTok = inTok+r.inTok, outTok+r.outTok
		if r.refusal != "" {
			summary("llm agent: the model refused", turn)
			return engine.Permanent(fmt.Errorf("llm agent: the model refused: %q", r.refusal))
		}
		if len(r.calls) == 0 {
			summary("llm agent: run done", turn)
			return nil
		}
		if turn >= a.cfg.MaxTurns {
			summary("llm agent: turn limit reached", turn)
			return engine.Permanent(fmt.Errorf("llm agent: the model was still calling tools after %d turns, the limit", a.cfg.MaxTurns))
		}
		results := make([]tools.Result, len(r.calls))
		for i, c := range r.calls {
			res, err := ws.Call(c.Name, c.Input)
			calls++
			log.Debug("llm agent: tool call", slog.Int("turn", turn), slog.String("tool", c.Name), slog.Bool("error", res.IsError))
			if err != nil {
				summary("llm agent: change limit reached", turn)
				return engine.Permanent(fmt.Errorf("llm agent: %w", err))
			}
			results[i] = res
		}
		conv.answer(r.calls, results)
	}
}

// scrub hides the API key in err's message, wherever it came from (a
// provider that quotes it back, a URL), keeping what err wraps.
func (a *Agent) scrub(err error) error {
	if err == nil || a.cfg.APIKey == "" || !strings.Contains(err.Error(), a.cfg.APIKey) {
		return err
	}
	return &scrubbed{err: err, msg: strings.ReplaceAll(err.Error(), a.cfg.APIKey, "[redacted]")}
}

type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
