package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/agent/llm/llmtest"
	"github.com/docsapi/docsapi-go/server/engine"
)

const chatKey = "sk-chat-sentinel-0123456789"

var chatProviders = []llm.Provider{llm.OpenAI, llm.Anthropic}

// chatAgent is an agent of provider p talking to srv, with short retry
// delays unless cfg sets them.
func chatAgent(t *testing.T, p llm.Provider, srv *llmtest.Server, cfg llm.Config) *llm.Agent {
	t.Helper()
	cfg.Provider, cfg.BaseURL, cfg.APIKey = p, srv.URL(), chatKey
	if cfg.Model == "" {
		cfg.Model = "config-model"
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = time.Millisecond
	}
	a, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// testCtx bounds a test's waits generously.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var question = llm.ChatRequest{Messages: []llm.ChatMessage{{Role: "user", Content: "How do I log in?"}}}

// collect reads the whole stream and closes it.
func collect(t *testing.T, s *llm.ChatStream) ([]string, error) {
	t.Helper()
	defer s.Close()
	var deltas []string
	for s.Next() {
		deltas = append(deltas, s.Text())
	}
	return deltas, s.Err()
}

func TestChatStreamsTheAnswer(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{Deltas: []string{"Open ", "the ", "login page."}, InputTokens: 321, OutputTokens: 45, Thinking: "hmm"})
			a := chatAgent(t, p, srv, llm.Config{})
			req := llm.ChatRequest{
				Model:  "answer-model",
				System: "Answer from the excerpts.",
				Messages: []llm.ChatMessage{
					{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello!"}, {Role: "user", Content: "How do I log in?"}},
			}
			s, err := a.Chat(testCtx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			deltas, err := collect(t, s)
			if err != nil {
				t.Fatalf("Err = %v", err)
			}
			if want := []string{"Open ", "the ", "login page."}; !reflect.DeepEqual(deltas, want) {
				t.Errorf("deltas %q, want %q (the thinking block is not the answer)", deltas, want)
			}
			if got, want := s.Usage(), (llm.ChatUsage{InputTokens: 321, OutputTokens: 45}); got != want {
				t.Errorf("Usage = %+v, want %+v", got, want)
			}
			if got := s.StopReason(); got != llm.StopEnd {
				t.Errorf("StopReason = %q, want %q", got, llm.StopEnd)
			}
			if s.Refused() {
				t.Error("Refused")
			}

			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Has("tools") || r.Has("tool_choice") || r.Has("functions") {
				t.Errorf("the request offers tools: %s", r.Body)
			}
			if r.System() != req.System || r.Model() != "answer-model" {
				t.Errorf("system %q, model %q", r.System(), r.Model())
			}
			want := []llmtest.Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello!"}, {Role: "user", Content: "How do I log in?"}}
			if got := r.Messages(); !reflect.DeepEqual(got, want) {
				t.Errorf("messages %+v, want %+v", got, want)
			}
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body["stream"] != true {
				t.Errorf("stream = %v", body["stream"])
			}
			if r.Header.Get("Accept") != "text/event-stream" {
				t.Errorf("Accept = %q", r.Header.Get("Accept"))
			}
			if p == llm.OpenAI {
				if r.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer "+chatKey {
					t.Errorf("path %q, authorization %q", r.Path, r.Header.Get("Authorization"))
				}
				if opts, _ := body["stream_options"].(map[string]any); opts["include_usage"] != true {
					t.Errorf("stream_options = %v", body["stream_options"])
				}
				if r.Has("max_tokens") {
					t.Errorf("max_tokens sent without ChatRequest.MaxTokens: %s", r.Body)
				}
			} else {
				if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != chatKey || r.Header.Get("Anthropic-Version") != llm.DefaultAnthropicVersion {
					t.Errorf("path %q, headers %v", r.Path, r.Header)
				}
				if body["max_tokens"] != float64(llm.DefaultMaxTokens) {
					t.Errorf("max_tokens = %v, want Config.MaxTokens", body["max_tokens"])
				}
			}
		})
	}
}

func TestChatRequestDefaultsAndChecks(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t)
			a := chatAgent(t, p, srv, llm.Config{})
			s, err := a.Chat(testCtx(t), llm.ChatRequest{MaxTokens: 77, Messages: question.Messages})
			if err != nil {
				t.Fatal(err)
			}
			text, err := collect(t, s)
			if err != nil || strings.Join(text, "") != llmtest.DefaultAnswer {
				t.Fatalf("%q, %v", text, err)
			}
			r := srv.Requests()[0]
			var body struct {
				MaxTokens int `json:"max_tokens"`
			}
			json.Unmarshal(r.Body, &body)
			if r.Model() != "config-model" || body.MaxTokens != 77 || r.System() != "" || r.Has("system") {
				t.Errorf("model %q, max_tokens %d, system %q: %s", r.Model(), body.MaxTokens, r.System(), r.Body)
			}
			for name, req := range map[string]llm.ChatRequest{
				"no message": {},
				"a bad role": {Messages: []llm.ChatMessage{{Role: "system", Content: "x"}}},
				"negative":   {Messages: question.Messages, MaxTokens: -1},
			} {
				if _, err := a.Chat(testCtx(t), req); err == nil || !engine.IsPermanent(err) {
					t.Errorf("%s: Chat = %v, want a permanent error", name, err)
				}
			}
			noModel, err := llm.New(llm.Config{Provider: p, BaseURL: srv.URL()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := noModel.Chat(testCtx(t), question); err == nil || !strings.Contains(err.Error(), "model") {
				t.Errorf("Chat without a model = %v", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1: refused requests must not be sent", n)
			}
		})
	}
}

func TestChatStopReasonsAndUsage(t *testing.T) {
	for _, p := range chatProviders {
		for _, tt := range []struct {
			name    string
			reply   llmtest.Reply
			text    string
			stop    string
			usage   llm.ChatUsage
			refused bool
		}{
			{name: "length", reply: llmtest.Reply{Deltas: []string{"cut"}, Stop: "length", InputTokens: 5, OutputTokens: 9},
				text: "cut", stop: llm.StopLength, usage: llm.ChatUsage{InputTokens: 5, OutputTokens: 9}},
			// Anthropic's content filter is its "refusal" stop reason.
			{name: "content filter", reply: llmtest.Reply{Deltas: []string{"x"}, Stop: "content-filter"}, text: "x", stop: llm.StopContentFilter,
				refused: p == llm.Anthropic},
			{name: "another reason", reply: llmtest.Reply{Deltas: []string{"x"}, Stop: map[llm.Provider]string{llm.OpenAI: "tool_calls", llm.Anthropic: "tool_use"}[p]},
				text: "x", stop: llm.StopOther},
			{name: "refusal", reply: llmtest.Reply{Refusal: "I can't help with that."}, text: "I can't help with that.",
				stop: llm.StopContentFilter, refused: true},
			{name: "no usage", reply: llmtest.Reply{Deltas: []string{"a", "b"}, NoUsage: true}, text: "ab", stop: llm.StopEnd},
		} {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(tt.reply)
				s, err := chatAgent(t, p, srv, llm.Config{}).Chat(testCtx(t), question)
				if err != nil {
					t.Fatal(err)
				}
				deltas, err := collect(t, s)
				if err != nil {
					t.Fatalf("Err = %v", err)
				}
				if text := strings.Join(deltas, ""); text != tt.text {
					t.Errorf("text %q, want %q", text, tt.text)
				}
				if s.StopReason() != tt.stop || s.Usage() != tt.usage || s.Refused() != tt.refused {
					t.Errorf("stop %q, usage %+v, refused %v; want %q, %+v, %v", s.StopReason(), s.Usage(), s.Refused(), tt.stop, tt.usage, tt.refused)
				}
			})
		}
	}
}

func TestChatErrorAnswers(t *testing.T) {
	leaky := "Incorrect API key provided: " + chatKey
	for _, p := range chatProviders {
		for _, tt := range []struct {
			name      string
			script    []llmtest.Reply
			cfg       llm.Config
			requests  int
			permanent bool
			status    int
			want      string
		}{
			{name: "401 is permanent, the key redacted", script: []llmtest.Reply{{Status: 401, Body: errorBody(p, leaky)}},
				requests: 1, permanent: true, status: 401, want: "401 Unauthorized: fake_error: Incorrect API key provided: [redacted]"},
			{name: "400 is permanent", script: []llmtest.Reply{{Status: 400}}, requests: 1, permanent: true, status: 400, want: "fake error"},
			{name: "a persistent 503 gives up", script: []llmtest.Reply{{Status: 503}, {Status: 503}, {Status: 503}},
				requests: 3, status: 503, want: "giving up after 3 attempts"},
			{name: "a Retry-After past the cap ends at once", script: []llmtest.Reply{{Status: 429, RetryAfter: "3600"}},
				cfg: llm.Config{MaxRetryDelay: time.Second}, requests: 1, status: 429, want: "asked to wait 1h0m0s"},
			{name: "no retries", script: []llmtest.Reply{{Status: 529}}, cfg: llm.Config{MaxRetries: -1}, requests: 1, status: 529, want: "529"},
			{name: "JSON instead of a stream", script: []llmtest.Reply{{Status: 200, Body: `{"choices":[]}`}}, requests: 1, want: "not an event stream"},
		} {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(tt.script...)
				s, err := chatAgent(t, p, srv, tt.cfg).Chat(testCtx(t), question)
				if err == nil {
					s.Close()
					t.Fatal("Chat succeeded")
				}
				if !strings.Contains(err.Error(), tt.want) || engine.IsPermanent(err) != tt.permanent {
					t.Errorf("Chat = %v; want permanent=%v, containing %q", err, tt.permanent, tt.want)
				}
				if strings.Contains(err.Error(), chatKey) {
					t.Errorf("the error shows the key: %v", err)
				}
				var apiErr *llm.APIError
				if got := errors.As(err, &apiErr); got != (tt.status != 0) || (got && apiErr.StatusCode != tt.status) {
					t.Errorf("APIError %+v, want status %d", apiErr, tt.status)
				}
				if n := len(srv.Requests()); n != tt.requests {
					t.Errorf("%d requests, want %d", n, tt.requests)
				}
			})
		}
	}
}

func errorBody(p llm.Provider, msg string) string {
	var v any = map[string]any{"error": map[string]any{"message": msg, "type": "fake_error"}}
	if p == llm.Anthropic {
		v = map[string]any{"type": "error", "error": map[string]any{"type": "fake_error", "message": msg}}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestChatRetriesBeforeTheStream(t *testing.T) {
	for _, p := range chatProviders {
		for _, tt := range []struct {
			name   string
			script []llmtest.Reply
		}{
			{name: "503", script: []llmtest.Reply{{Status: 503}}},
			{name: "429 and 529", script: []llmtest.Reply{{Status: 429, RetryAfter: "0"}, {Status: 529}}},
			{name: "a 200 cut before its first byte", script: []llmtest.Reply{{Cut: true}}},
		} {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(tt.script...)
				s, err := chatAgent(t, p, srv, llm.Config{}).Chat(testCtx(t), question)
				if err != nil {
					t.Fatal(err)
				}
				deltas, err := collect(t, s)
				if err != nil || strings.Join(deltas, "") != llmtest.DefaultAnswer {
					t.Fatalf("%q, %v", deltas, err)
				}
				if n, want := len(srv.Requests()), len(tt.script)+1; n != want {
					t.Errorf("%d requests, want %d", n, want)
				}
			})
		}
	}
}

func TestChatHonoursRetryAfter(t *testing.T) {
	// With a backoff of an hour, only the Retry-After of 0 lets the retry
	// happen before the test's deadline.
	for _, p := range chatProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{Status: 429, RetryAfter: "0"})
			a := chatAgent(t, p, srv, llm.Config{RetryDelay: time.Hour, MaxRetryDelay: 2 * time.Hour})
			s, err := a.Chat(testCtx(t), question)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := collect(t, s); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestChatCutStream(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{Deltas: []string{"Half ", "an answer"}, Cut: true})
			s, err := chatAgent(t, p, srv, llm.Config{}).Chat(testCtx(t), question)
			if err != nil {
				t.Fatal(err)
			}
			deltas, err := collect(t, s)
			if strings.Join(deltas, "") != "Half an answer" {
				t.Errorf("deltas %q", deltas)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("Err = %v, want io.ErrUnexpectedEOF", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a stream that began must not be retried", n)
			}
		})
	}
}

func TestChatErrorEvent(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{Deltas: []string{"Begun"}, StreamError: "Overloaded; key " + chatKey})
			s, err := chatAgent(t, p, srv, llm.Config{}).Chat(testCtx(t), question)
			if err != nil {
				t.Fatal(err)
			}
			deltas, err := collect(t, s)
			if strings.Join(deltas, "") != "Begun" {
				t.Errorf("deltas %q", deltas)
			}
			var streamErr *llm.StreamError
			if !errors.As(err, &streamErr) || !strings.Contains(streamErr.Message, "Overloaded") {
				t.Fatalf("Err = %v, want a StreamError", err)
			}
			if strings.Contains(err.Error(), chatKey) || strings.Contains(streamErr.Message, chatKey) {
				t.Errorf("the error shows the key: %v", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a stream that began must not be retried", n)
			}
		})
	}
}

func TestChatHandsOverDeltasAsTheyArrive(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t)
			hold := make(chan struct{})
			srv.Script(llmtest.Reply{Deltas: []string{"First", " second", " third"}, FirstDelay: 5 * time.Millisecond, Gap: time.Millisecond, Hold: hold})
			s, err := chatAgent(t, p, srv, llm.Config{}).Chat(testCtx(t), question)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// The server sends nothing more until hold is closed: Next
			// must return the first delta without waiting for the rest.
			if !s.Next() || s.Text() != "First" {
				t.Fatalf("Next: %q, %v", s.Text(), s.Err())
			}
			close(hold)
			rest, err := collect(t, s)
			if err != nil || strings.Join(rest, "") != " second third" {
				t.Fatalf("rest %q, %v", rest, err)
			}
		})
	}
}

func TestChatCloseEarlyReleasesTheConnection(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t)
			hold := make(chan struct{}) // never closed
			srv.Script(llmtest.Reply{Deltas: []string{"one", "two"}, Hold: hold})
			s, err := chatAgent(t, p, srv, llm.Config{}).Chat(testCtx(t), question)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Next() {
				t.Fatalf("Next: %v", s.Err())
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-srv.Requests()[0].Disconnected:
			case <-testCtx(t).Done():
				t.Fatal("the server never saw the connection close")
			}
			if err := s.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if s.Next() || s.Err() == nil {
				t.Errorf("Next after Close: %v, Err %v", s.Text(), s.Err())
			}
		})
	}
}

func TestChatContextCancel(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p)+"/during the stream", func(t *testing.T) {
			srv := llmtest.New(t)
			hold := make(chan struct{}) // never closed
			srv.Script(llmtest.Reply{Deltas: []string{"one", "two"}, Hold: hold})
			ctx, cancel := context.WithCancel(testCtx(t))
			s, err := chatAgent(t, p, srv, llm.Config{}).Chat(ctx, question)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !s.Next() {
				t.Fatalf("Next: %v", s.Err())
			}
			cancel()
			if s.Next() || !errors.Is(s.Err(), context.Canceled) {
				t.Fatalf("Next after cancel: %q, Err %v", s.Text(), s.Err())
			}
			select {
			case <-srv.Requests()[0].Disconnected:
			case <-testCtx(t).Done():
				t.Fatal("the server never saw the connection close")
			}
		})
		t.Run(string(p)+"/before the first byte", func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{FirstDelay: time.Hour})
			ctx, cancel := context.WithTimeout(testCtx(t), 50*time.Millisecond)
			defer cancel()
			_, err := chatAgent(t, p, srv, llm.Config{}).Chat(ctx, question)
			if !errors.Is(err, context.DeadlineExceeded) || engine.IsPermanent(err) {
				t.Fatalf("Chat = %v, want the context's deadline", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: the caller's context ended, nothing to retry", n)
			}
		})
	}
}

func TestChatSilence(t *testing.T) {
	for _, p := range chatProviders {
		t.Run(string(p)+"/before the first byte, retried", func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{FirstDelay: time.Hour}, llmtest.Reply{FirstDelay: time.Hour})
			a := chatAgent(t, p, srv, llm.Config{RequestTimeout: 50 * time.Millisecond, MaxRetries: 1})
			_, err := a.Chat(testCtx(t), question)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "giving up after 2 attempts") {
				t.Fatalf("Chat = %v", err)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
		t.Run(string(p)+"/between events", func(t *testing.T) {
			srv := llmtest.New(t)
			hold := make(chan struct{}) // never closed
			srv.Script(llmtest.Reply{Deltas: []string{"one", "two"}, Hold: hold})
			a := chatAgent(t, p, srv, llm.Config{RequestTimeout: 50 * time.Millisecond})
			s, err := a.Chat(testCtx(t), question)
			if err != nil {
				t.Fatal(err)
			}
			deltas, err := collect(t, s)
			if strings.Join(deltas, "") != "one" || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "sent nothing for 50ms") {
				t.Fatalf("%q, Err %v", deltas, err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests", n)
			}
		})
		t.Run(string(p)+"/a long stream is not cut", func(t *testing.T) {
			// The stream lasts several times RequestTimeout and the client's
			// Timeout, but no gap comes near them.
			srv := llmtest.New(t)
			deltas := strings.Split(strings.Repeat("x", 12), "")
			srv.Script(llmtest.Reply{Deltas: deltas, Gap: 25 * time.Millisecond})
			a := chatAgent(t, p, srv, llm.Config{RequestTimeout: 150 * time.Millisecond, HTTPClient: &http.Client{Timeout: 150 * time.Millisecond}})
			s, err := a.Chat(testCtx(t), question)
			if err != nil {
				t.Fatal(err)
			}
			got, err := collect(t, s)
			if err != nil || len(got) != len(deltas) {
				t.Fatalf("%d deltas, Err %v", len(got), err)
			}
		})
	}
}
