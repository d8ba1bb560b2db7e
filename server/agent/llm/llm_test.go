package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
)

// sentinelKey must never show in an error or a log line.
const sentinelKey = "sk-SENTINEL-0f1e2d3c4b5a"

const intro = "# Intro\nHello world\n"

var providers = []Provider{OpenAI, Anthropic}

// workspace returns a folder with two pages, and a folder next to it
// holding a secret, reachable through the symbolic link "out".
func workspace(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for name, content := range map[string]string{
		"ws/docs/intro.md":   intro,
		"ws/docs.json":       `{"navigation": ["docs/intro"]}` + "\n",
		"outside/secret.txt": "top secret\n",
	} {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

func newAgent(t *testing.T, f *fake, cfg Config) *Agent {
	t.Helper()
	cfg.Provider = f.provider
	cfg.BaseURL = f.baseURL()
	if cfg.APIKey == "" {
		cfg.APIKey = sentinelKey
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = time.Millisecond
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestToolLoop(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			dir, _ := workspace(t)
			f := newFake(t, p,
				toolTurn(fakeCall{"call_1", "list_files", `{}`}),
				toolTurn(
					fakeCall{"call_2", "read_file", `{"path":"docs/intro.md"}`},
					fakeCall{"call_3", "search", `{"pattern":"Hello"}`},
				),
				toolTurn(fakeCall{"call_4", "edit_file", callInput(map[string]string{
					"path": "docs/intro.md", "old_string": "Hello world", "new_string": "Hello, world"})}),
				finalTurn("Fixed the greeting's punctuation."),
			)
			var logs bytes.Buffer
			a := newAgent(t, f, Config{Model: "configured-model", Instructions: "Write in British English.",
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			task := engine.Task{JobID: "job_1", ProjectID: "proj_1", Dir: dir, Model: "task-model",
				Prompts: []string{"Document the intro.", "Fix the greeting's punctuation."}}
			if err := a.Run(context.Background(), task); err != nil {
				t.Fatalf("Run: %v", err)
			}

			if got, want := readFile(t, filepath.Join(dir, "docs/intro.md")), "# Intro\nHello, world\n"; got != want {
				t.Errorf("docs/intro.md = %q, want %q", got, want)
			}
			if n := f.requestCount(); n != 4 {
				t.Fatalf("%d requests, want 4", n)
			}
			for i := range 4 {
				r := f.request(i)
				s := f.decode(i)
				switch p {
				case OpenAI:
					if r.path != "POST /v1/chat/completions" || r.header.Get("Authorization") != "Bearer "+sentinelKey {
						t.Errorf("request %d: %s, Authorization %q", i, r.path, r.header.Get("Authorization"))
					}
				case Anthropic:
					if r.path != "POST /v1/messages" || r.header.Get("X-Api-Key") != sentinelKey ||
						r.header.Get("Anthropic-Version") != "2023-06-01" || r.header.Get("Authorization") != "" {
						t.Errorf("request %d: %s, headers %v", i, r.path, r.header)
					}
					if s.MaxTokens != DefaultMaxTokens {
						t.Errorf("request %d: max_tokens %d", i, s.MaxTokens)
					}
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("request %d: Content-Type %q", i, ct)
				}
				if s.Model != "task-model" {
					t.Errorf("request %d: model %q; the task's model wins", i, s.Model)
				}
				if got := strings.Join(s.Tools, ","); got != "delete_file,edit_file,list_files,read_file,search,write_file" {
					t.Errorf("request %d: tools %s", i, got)
				}
				if !strings.HasPrefix(s.System, SystemPrompt) || !strings.HasSuffix(s.System, "Write in British English.") {
					t.Errorf("request %d: system prompt %q", i, s.System)
				}
				wantUser := "Earlier instructions of this job, oldest first. They were given before\n" +
					"and their changes, if any, are already in the files; they are context\n" +
					"only:\n\n[Instruction 1]\nDocument the intro.\n\n" +
					"Carry out this new instruction now:\n\nFix the greeting's punctuation."
				if s.User != wantUser {
					t.Errorf("request %d: user message %q", i, s.User)
				}
			}
			// The whole history is sent each turn: OpenAI has a system message,
			// then each turn adds the assistant's message and one message per
			// result; Anthropic adds the assistant's message and one user
			// message holding all the results.
			wantCounts := map[Provider][]int{OpenAI: {2, 4, 7, 9}, Anthropic: {1, 3, 5, 7}}[p]
			for i, want := range wantCounts {
				if n := len(f.decode(i).Messages); n != want {
					t.Errorf("request %d has %d messages, want %d", i, n, want)
				}
			}

			calls, results := f.results(1)
			assertResults(t, 1, calls, results, []string{"call_1"}, []toolResult{
				{ID: "call_1", Content: "docs/intro.md\ndocs.json\nout (symbolic link, not followed)"}})
			calls, results = f.results(2)
			assertResults(t, 2, calls, results, []string{"call_2", "call_3"}, []toolResult{
				{ID: "call_2", Content: intro},
				{ID: "call_3", Content: "docs/intro.md:2: Hello world"}})
			calls, results = f.results(3)
			assertResults(t, 3, calls, results, []string{"call_4"}, []toolResult{
				{ID: "call_4", Content: "edited docs/intro.md"}})

			for _, want := range []string{"run done", "turns=4", "tool_calls=4", "input_tokens=400", "output_tokens=40", "model=task-model"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the logs do not contain %q:\n%s", want, logs.String())
				}
			}
			for _, secret := range []string{sentinelKey, "Hello world", "Fix the greeting"} {
				if strings.Contains(logs.String(), secret) {
					t.Errorf("the logs contain %q", secret)
				}
			}
		})
	}
}

func assertResults(t *testing.T, req int, calls []string, results []toolResult, wantCalls []string, want []toolResult) {
	t.Helper()
	if strings.Join(calls, ",") != strings.Join(wantCalls, ",") {
		t.Errorf("request %d: the assistant turn has calls %v, want %v", req, calls, wantCalls)
	}
	if len(results) != len(want) {
		t.Fatalf("request %d: results %+v, want %+v", req, results, want)
	}
	for i := range want {
		if results[i] != want[i] {
			t.Errorf("request %d: result %d = %+v, want %+v", req, i, results[i], want[i])
		}
	}
}

func TestEscapesAreReportedToTheModel(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			dir, outside := workspace(t)
			f := newFake(t, p,
				toolTurn(
					fakeCall{"c1", "read_file", `{"path":"../outside/secret.txt"}`},
					fakeCall{"c2", "write_file", `{"path":"../escape.md","content":"x"}`},
					fakeCall{"c3", "read_file", `{"path":"out/secret.txt"}`},
					fakeCall{"c4", "write_file", `{"path":"out/planted.md","content":"x"}`},
					fakeCall{"c5", "edit_file", `{"path":"out/secret.txt","old_string":"top","new_string":"no"}`},
					fakeCall{"c6", "write_file", `{"path":".git/hooks/pre-commit","content":"#!/bin/sh"}`},
					fakeCall{"c7", "read_file", `{"path":5}`},
					fakeCall{"c8", "run_shell", `{"command":"id"}`},
				),
				finalTurn("I could not reach those files."),
			)
			if err := newAgent(t, f, Config{Model: "m"}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}}); err != nil {
				t.Fatalf("Run: %v; refused calls must not end the run", err)
			}
			_, results := f.results(1)
			wants := []string{"leaves the workspace", "leaves the workspace", "out is a symbolic link", "out is a symbolic link",
				"out is a symbolic link", ".git folder is off limits", "invalid arguments", "unknown tool"}
			if len(results) != len(wants) {
				t.Fatalf("results %+v", results)
			}
			for i, want := range wants {
				r := results[i]
				if r.ID != fmt.Sprintf("c%d", i+1) || !r.IsError || !strings.Contains(r.Content, want) || strings.Contains(r.Content, "top secret") {
					t.Errorf("result %d = %+v, want an error about %q", i, r, want)
				}
			}
			if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "top secret\n" {
				t.Errorf("the secret outside changed: %q", got)
			}
			for _, p := range []string{filepath.Join(outside, "planted.md"), filepath.Join(filepath.Dir(dir), "escape.md"), filepath.Join(dir, ".git")} {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists", filepath.Base(p))
				}
			}
		})
	}
}

func TestMalformedArguments(t *testing.T) {
	// OpenAI sends the arguments as a string that may not be JSON at all.
	dir, _ := workspace(t)
	f := newFake(t, OpenAI, toolTurn(fakeCall{"c1", "read_file", `{"path": "docs/in`}), finalTurn("done"))
	if err := newAgent(t, f, Config{Model: "m"}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if _, results := f.results(1); len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "invalid arguments") {
		t.Errorf("results %+v", results)
	}
}

func TestLimits(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p)+"/turns", func(t *testing.T) {
			dir, _ := workspace(t)
			f := newFake(t, p, toolTurn(fakeCall{"c", "list_files", `{}`}))
			err := newAgent(t, f, Config{Model: "m", MaxTurns: 3}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}})
			if !engine.IsPermanent(err) || !strings.Contains(err.Error(), "after 3 turns") {
				t.Fatalf("Run = %v, want a permanent turn limit error", err)
			}
			if n := f.requestCount(); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
		})
		t.Run(string(p)+"/changes", func(t *testing.T) {
			dir, _ := workspace(t)
			f := newFake(t, p,
				toolTurn(fakeCall{"c1", "write_file", `{"path":"a.md","content":"0123456789"}`}),
				toolTurn(fakeCall{"c2", "write_file", `{"path":"b.md","content":"0123456789"}`}),
				finalTurn("done"),
			)
			err := newAgent(t, f, Config{Model: "m", MaxChangedBytes: 15}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}})
			if !engine.IsPermanent(err) || !strings.Contains(err.Error(), "exceed the limit") {
				t.Fatalf("Run = %v, want a permanent change limit error", err)
			}
			if n := f.requestCount(); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			if _, err := os.Stat(filepath.Join(dir, "b.md")); !errors.Is(err, os.ErrNotExist) {
				t.Error("the change past the limit was made")
			}
		})
		t.Run(string(p)+"/file size", func(t *testing.T) {
			dir, _ := workspace(t)
			f := newFake(t, p,
				toolTurn(fakeCall{"c1", "write_file", `{"path":"a.md","content":"0123456789"}`}),
				finalTurn("done"),
			)
			if err := newAgent(t, f, Config{Model: "m", MaxFileBytes: 5}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}}); err != nil {
				t.Fatal(err)
			}
			if _, results := f.results(1); len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "over the limit of 5 bytes") {
				t.Errorf("results %+v", results)
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		provider Provider
		answer   answer
		want     string
	}{
		{OpenAI, answer{refusal: "I can't help with that."}, `the model refused: "I can't help with that."`},
		{OpenAI, answer{text: "partial", stop: "content_filter"}, "content filter"},
		{Anthropic, answer{text: "I won't write that.", stop: "refusal"}, `the model refused: "I won't write that."`},
		{Anthropic, answer{stop: "refusal"}, "the model refused"},
	}
	for _, tt := range tests {
		t.Run(string(tt.provider), func(t *testing.T) {
			dir, _ := workspace(t)
			f := newFake(t, tt.provider, tt.answer)
			err := newAgent(t, f, Config{Model: "m"}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}})
			if !engine.IsPermanent(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run = %v, want a permanent error with %q", err, tt.want)
			}
		})
	}
}

// errorBody is an error answer in the provider's format that quotes the
// key back, as some providers and proxies do.
func errorBody(p Provider, typ, msg string) string {
	if p == OpenAI {
		return fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error","code":%q}}`, msg, typ)
	}
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

func TestHTTPErrors(t *testing.T) {
	for _, p := range providers {
		leaky := "Incorrect API key provided: " + sentinelKey
		tests := []struct {
			name      string
			script    []answer
			retries   int
			permanent bool
			ok        bool
			requests  int
			want      string
		}{
			{name: "401 is permanent", script: []answer{{status: 401, body: errorBody(p, "invalid_api_key", leaky)}},
				permanent: true, requests: 1, want: "401 Unauthorized: invalid_api_key: Incorrect API key provided: [redacted]"},
			{name: "403 is permanent", script: []answer{{status: 403, body: errorBody(p, "permission_error", "no access")}},
				permanent: true, requests: 1, want: "403 Forbidden"},
			{name: "400 is permanent", script: []answer{{status: 400, body: errorBody(p, "invalid_request_error", "bad tools")}},
				permanent: true, requests: 1, want: "bad tools"},
			{name: "404 is permanent", script: []answer{{status: 404, body: `not found`}},
				permanent: true, requests: 1, want: "404 Not Found: not found"},
			{name: "500 then success", script: []answer{{status: 500, body: `{}`}, finalTurn("done")},
				ok: true, requests: 2},
			{name: "429 with Retry-After then success", script: []answer{
				{status: 429, body: errorBody(p, "rate_limit_error", "slow down"), header: map[string]string{"Retry-After": "0"}},
				{status: 529, body: errorBody(p, "overloaded_error", "overloaded")}, finalTurn("done")},
				ok: true, requests: 3},
			{name: "persistent 503 is not permanent", script: []answer{{status: 503, body: "upstream down"}},
				requests: 3, want: "giving up after 3 attempts: the model provider answered 503 Service Unavailable: upstream down"},
			{name: "no retries", script: []answer{{status: 503, body: "upstream down"}}, retries: -1, requests: 1, want: "503"},
			{name: "a Retry-After past the cap ends at once", script: []answer{{status: 429, body: "{}", header: map[string]string{"Retry-After": "3600"}}},
				requests: 1, want: "asked to wait 1h0m0s"},
			{name: "a garbled answer", script: []answer{{status: 200, body: `{"choices": [`}}, requests: 1, want: "reading the provider's answer"},
			{name: "a redirect is not followed", script: []answer{{status: 307, body: "", header: map[string]string{"Location": "http://127.0.0.1:1/elsewhere"}}},
				permanent: true, requests: 1, want: "307"},
		}
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				dir, _ := workspace(t)
				f := newFake(t, p, tt.script...)
				var logs bytes.Buffer
				a := newAgent(t, f, Config{Model: "m", MaxRetries: tt.retries, MaxRetryDelay: time.Second,
					Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
				err := a.Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}})
				switch {
				case tt.ok && err != nil:
					t.Fatalf("Run: %v", err)
				case !tt.ok && (err == nil || engine.IsPermanent(err) != tt.permanent || !strings.Contains(err.Error(), tt.want)):
					t.Fatalf("Run = %v; want permanent=%v, containing %q", err, tt.permanent, tt.want)
				}
				if n := f.requestCount(); n != tt.requests {
					t.Errorf("%d requests, want %d", n, tt.requests)
				}
				for name, text := range map[string]string{"logs": logs.String(), "error": fmt.Sprint(err)} {
					if strings.Contains(text, sentinelKey) {
						t.Errorf("the %s contain the API key:\n%s", name, text)
					}
				}
				var apiErr *APIError
				if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, sentinelKey) {
					t.Errorf("APIError.Message contains the key")
				}
			})
		}
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	// With a backoff of a minute, only the Retry-After of 0 lets the
	// retry happen at once.
	dir, _ := workspace(t)
	f := newFake(t, Anthropic,
		answer{status: 429, body: "{}", header: map[string]string{"Retry-After": "0"}},
		finalTurn("done"))
	a := newAgent(t, f, Config{Model: "m", RetryDelay: time.Minute, MaxRetryDelay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Run(ctx, engine.Task{Dir: dir, Prompts: []string{"x"}}); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestCancellation(t *testing.T) {
	for _, tt := range []struct {
		name string
		// answer is the status the fake answers with, 0 to hang.
		status  int
		timeout time.Duration
		retries int
		want    error
	}{
		{name: "during a request", want: context.Canceled},
		{name: "during a backoff", status: 503, want: context.Canceled},
		{name: "a request timeout is retried, then not permanent", timeout: 50 * time.Millisecond, retries: 1, want: context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := workspace(t)
			release := make(chan struct{})
			var requests atomic.Int32
			hold := make(chan struct{}, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				hold <- struct{}{}
				if tt.status != 0 {
					w.WriteHeader(tt.status)
					return
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer srv.Close()
			defer close(release)
			// A backoff of a minute, unless the test is about the request
			// timeout: cancellation must cut the wait short.
			delay := time.Minute
			if tt.timeout != 0 {
				delay = time.Millisecond
			}
			a, err := New(Config{Provider: OpenAI, BaseURL: srv.URL, Model: "m", APIKey: sentinelKey,
				RequestTimeout: tt.timeout, MaxRetries: tt.retries, RetryDelay: delay})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.want == context.Canceled {
				go func() { <-hold; cancel() }()
			}
			start := time.Now()
			err = a.Run(ctx, engine.Task{Dir: dir, Prompts: []string{"x"}})
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Run took %s", elapsed)
			}
			if !errors.Is(err, tt.want) || engine.IsPermanent(err) {
				t.Fatalf("Run = %v, want %v, not permanent", err, tt.want)
			}
			if n := requests.Load(); tt.timeout != 0 && n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

func TestModel(t *testing.T) {
	dir, _ := workspace(t)
	f := newFake(t, OpenAI, finalTurn("done"))
	if err := newAgent(t, f, Config{Model: "configured"}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if m := f.decode(0).Model; m != "configured" {
		t.Errorf("model %q, want the configured one when the task has none", m)
	}
	err := newAgent(t, f, Config{}).Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}})
	if !engine.IsPermanent(err) || !strings.Contains(err.Error(), "names a model") {
		t.Errorf("Run without a model = %v", err)
	}
	err = newAgent(t, f, Config{Model: "m"}).Run(context.Background(), engine.Task{Dir: dir})
	if !engine.IsPermanent(err) || !strings.Contains(err.Error(), "no prompt") {
		t.Errorf("Run without a prompt = %v", err)
	}
	if n := f.requestCount(); n != 1 {
		t.Errorf("%d requests, want 1: a run that cannot start must not call the model", n)
	}
}

func TestNoKey(t *testing.T) {
	// Local OpenAI-compatible servers take no key: no header is sent.
	dir, _ := workspace(t)
	f := newFake(t, OpenAI, finalTurn("done"))
	a, err := New(Config{Provider: OpenAI, BaseURL: f.baseURL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(context.Background(), engine.Task{Dir: dir, Prompts: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if h := f.request(0).header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q", h)
	}
}

func TestConfigNeverShowsTheKey(t *testing.T) {
	cfg := Config{Provider: Anthropic, APIKey: sentinelKey, Model: "m"}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("configured", slog.Any("config", cfg))
	for _, text := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", &cfg), logs.String()} {
		if strings.Contains(text, sentinelKey) || !strings.Contains(text, "[redacted]") || !strings.Contains(text, "anthropic") {
			t.Errorf("printed config: %s", text)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no provider", Config{}, "Provider"},
		{"an unknown provider", Config{Provider: "gemini"}, `"gemini"`},
		{"a bad URL", Config{Provider: OpenAI, BaseURL: "api.example.com/v1"}, "not an http(s) URL"},
		{"a negative limit", Config{Provider: OpenAI, MaxTurns: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error about %q", err, tt.want)
			}
		})
	}
	a, err := New(Config{Provider: Anthropic})
	if err != nil {
		t.Fatal(err)
	}
	if a.base != DefaultAnthropicBaseURL || a.cfg.MaxTurns != DefaultMaxTurns || a.cfg.MaxRetries != DefaultMaxRetries {
		t.Errorf("defaults: %+v", a.cfg)
	}
}
