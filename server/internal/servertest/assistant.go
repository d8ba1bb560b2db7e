package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/agent/llm/llmtest"
	"github.com/docsapi/docsapi-go/server/store"
)

// A server with an assistant, for the tests of the assistant's endpoint and
// of its clients (the widget's panel, the ai package's reader): a project
// with a documentation index, an assistant key, and a fake model
// (llmtest) behind the real llm client.
//
//	a := servertest.NewAssistant(t, llm.Anthropic, nil)
//	a.Model.Script(llmtest.Reply{Deltas: []string{"Run ", "install."}})
//	resp, body := a.Ask(servertest.Question("How do I install it?"))
//	events := servertest.ParseStream(t, body)
//
// a.Serve() gives a URL for a browser or a Node program, under /api.

// AssistantProject, AssistantDomain and AssistantOrigin are the project
// NewAssistant indexes, its domain identifier, and the origin of its
// documentation site, the one origin of its assistant key.
const (
	AssistantProject = "gamma"
	AssistantDomain  = "gamma-docs"
	AssistantOrigin  = "https://docs.gamma.example"
)

// AssistantEnv is an Env with an assistant (see NewAssistant).
type AssistantEnv struct {
	*Env
	// Model is the fake model provider every project's assistant asks.
	Model *llmtest.Server
	// Provider is the wire format the assistant speaks to it.
	Provider llm.Provider
}

// NewAssistant returns New with an assistant: project AssistantProject,
// domain AssistantDomain, indexed from package docs' test site and pages;
// an assistant key for AssistantOrigin in Keys["assistant"]; and every
// project's assistant model an *llm.Agent of provider on a fake model
// (WithFakeModel). mutate changes the Config after that, so it may take
// the model away or bound it.
func NewAssistant(t testing.TB, provider llm.Provider, pages []store.DocPage, mutate ...func(*server.Config)) *AssistantEnv {
	t.Helper()
	fake := llmtest.New(t)
	e := New(t, append([]func(*server.Config){WithFakeModel(t, fake, provider)}, mutate...)...)
	e.IndexDocs(t, AssistantProject, AssistantDomain, pages...)
	k, err := e.Server.CreateAssistantKey(context.Background(), server.AssistantKeyParams{Project: AssistantProject, Name: "docs", Origins: []string{AssistantOrigin}})
	if err != nil {
		t.Fatalf("CreateAssistantKey: %v", err)
	}
	e.Keys["assistant"] = k.Secret
	return &AssistantEnv{Env: e, Model: fake, Provider: provider}
}

// WithFakeModel returns a change of Config that gives every project an
// assistant model: an *llm.Agent of provider on fake, which never
// retries (a scripted failure is seen at once).
func WithFakeModel(t testing.TB, fake *llmtest.Server, provider llm.Provider) func(*server.Config) {
	t.Helper()
	agent, err := llm.New(llm.Config{Provider: provider, BaseURL: fake.URL(), Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return func(c *server.Config) {
		c.AssistantModel = func(store.Project) (server.AssistantModel, error) {
			return server.AssistantModel{Chat: agent}, nil
		}
	}
}

// Question is a request body asking text in a new thread, as the AI SDK's
// clients send one.
func Question(text string) string {
	return Body(map[string]any{"fp": "anonymous", "messages": []any{UserMessage(text)}})
}

// FollowUp is a request body asking text in the thread id with key.
func FollowUp(id, key, text string) string {
	return Body(map[string]any{"fp": "anonymous", "threadId": id, "threadKey": key, "messages": []any{UserMessage(text)}})
}

// UserMessage is a user message of text, in the AI SDK's shape.
func UserMessage(text string) map[string]any {
	return map[string]any{"id": "m-" + text[:min(len(text), 8)], "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}
}

// Body is v as JSON.
func Body(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Ask posts body to the assistant of AssistantDomain with Keys["assistant"]
// from a page of AssistantOrigin, and returns the response with its body
// read. Header adds headers as name, value pairs; an "Origin" with an
// empty value sends none, as a program does.
func (e *AssistantEnv) Ask(body string, header ...string) (*http.Response, []byte) {
	e.T.Helper()
	req := httptest.NewRequest("POST", "/discovery/v2/assistant/"+AssistantDomain+"/message", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+e.Keys["assistant"])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", AssistantOrigin)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// Event is one event of an answer's stream, its JSON decoded.
type Event map[string]any

// Type is the event's type.
func (ev Event) Type() string { s, _ := ev["type"].(string); return s }

// String is the field name's string value.
func (ev Event) String(name string) string { s, _ := ev[name].(string); return s }

// ParseStream reads an answer's stream: "data: " events apart by a blank
// line, each one JSON object, the last "data: [DONE]". It fails the test
// on anything else.
func ParseStream(t testing.TB, body []byte) []Event {
	t.Helper()
	text := string(body)
	if !strings.HasSuffix(text, "data: [DONE]\n\n") {
		t.Fatalf("the stream does not end with data: [DONE]: %q", tail(text))
	}
	var events []Event
	for _, block := range strings.Split(strings.TrimSuffix(text, "data: [DONE]\n\n"), "\n\n") {
		if block == "" {
			continue
		}
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("an event is not one data line: %q", block)
		}
		var ev Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("an event is not a JSON object: %q: %v", data, err)
		}
		events = append(events, ev)
	}
	return events
}

// Types lists the events' types, in order.
func Types(events []Event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.Type()
	}
	return out
}

// AnswerText is the text of the events' text deltas, joined.
func AnswerText(events []Event) string {
	var b strings.Builder
	for _, ev := range events {
		if ev.Type() == "text-delta" {
			b.WriteString(ev.String("delta"))
		}
	}
	return b.String()
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}
