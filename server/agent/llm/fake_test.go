package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeCall is a tool call a scripted model makes.
type fakeCall struct{ id, name, input string }

// answer is one scripted HTTP answer: a model turn (calls and text), or a
// raw status and body.
type answer struct {
	calls   []fakeCall
	text    string
	stop    string // overrides the stop or finish reason
	refusal string // OpenAI's refusal field

	status int
	body   string
	header map[string]string
}

// toolTurn and finalTurn build the usual answers.
func toolTurn(calls ...fakeCall) answer { return answer{calls: calls} }
func finalTurn(text string) answer      { return answer{text: text} }

// recorded is a request the fake received.
type recorded struct {
	path   string
	header http.Header
	body   []byte
}

// fake is a model provider speaking one wire format, answering from a
// script; once the script is used up it repeats its last answer.
type fake struct {
	t        *testing.T
	provider Provider
	srv      *httptest.Server

	mu       sync.Mutex
	script   []answer
	requests []recorded
	// sent holds the content blocks of each Anthropic answer, to check that
	// the agent sends them back unchanged.
	sent []string
}

func newFake(t *testing.T, provider Provider, script ...answer) *fake {
	t.Helper()
	f := &fake{t: t, provider: provider, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is what Config.BaseURL is set to: OpenAI-compatible bases end in
// /v1, Anthropic's does not.
func (f *fake) baseURL() string {
	if f.provider == OpenAI {
		return f.srv.URL + "/v1"
	}
	return f.srv.URL
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("reading the request: %v", err)
	}
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, recorded{path: r.Method + " " + r.URL.Path, header: r.Header.Clone(), body: body})
	a := f.script[min(n, len(f.script)-1)]
	f.mu.Unlock()
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	if a.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
		return
	}
	var out any
	if f.provider == OpenAI {
		out = f.openAIAnswer(a)
	} else {
		out = f.anthropicAnswer(a)
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		f.t.Errorf("encoding the answer: %v", err)
	}
}

func (f *fake) openAIAnswer(a answer) any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if a.text != "" {
		msg["content"] = a.text
	}
	if a.refusal != "" {
		msg["refusal"] = a.refusal
	}
	finish := "stop"
	if len(a.calls) > 0 {
		finish = "tool_calls"
		var calls []any
		for _, c := range a.calls {
			calls = append(calls, map[string]any{"id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.input}})
		}
		msg["tool_calls"] = calls
	}
	if a.stop != "" {
		finish = a.stop
	}
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10},
	}
}

func (f *fake) anthropicAnswer(a answer) any {
	var content []any
	if a.text != "" {
		content = append(content, map[string]any{"type": "text", "text": a.text})
	}
	stop := "end_turn"
	for _, c := range a.calls {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.input)})
	}
	if a.stop != "" {
		stop = a.stop
	}
	raw, err := json.Marshal(content)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.sent = append(f.sent, string(raw))
	f.mu.Unlock()
	return map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": json.RawMessage(raw), "stop_reason": stop,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 10},
	}
}

func (f *fake) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fake) request(i int) recorded {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.requests) {
		f.t.Fatalf("request %d was not sent; %d were", i, len(f.requests))
	}
	return f.requests[i]
}

// sentRequest is the part of a request the tests look at, in either format.
type sentRequest struct {
	Model     string
	MaxTokens int
	System    string
	Tools     []string
	User      string // the first user message
	Messages  []json.RawMessage
}

func (f *fake) decode(i int) sentRequest {
	f.t.Helper()
	var raw struct {
		Model     string            `json:"model"`
		MaxTokens int               `json:"max_tokens"`
		System    string            `json:"system"`
		Messages  []json.RawMessage `json:"messages"`
		Tools     []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(f.request(i).body, &raw); err != nil {
		f.t.Fatalf("request %d: %v", i, err)
	}
	s := sentRequest{Model: raw.Model, MaxTokens: raw.MaxTokens, System: raw.System, Messages: raw.Messages}
	for _, tool := range raw.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
			Function    struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(tool, &t); err != nil {
			f.t.Fatal(err)
		}
		switch {
		case f.provider == OpenAI && t.Type == "function" && len(t.Function.Parameters) > 0:
			s.Tools = append(s.Tools, t.Function.Name)
		case f.provider == Anthropic && len(t.InputSchema) > 0:
			s.Tools = append(s.Tools, t.Name)
		default:
			f.t.Errorf("request %d: a malformed tool: %s", i, tool)
		}
	}
	messages := raw.Messages
	if f.provider == OpenAI {
		var sys struct{ Role, Content string }
		if len(messages) > 0 && json.Unmarshal(messages[0], &sys) == nil && sys.Role == "system" {
			s.System = sys.Content
			messages = messages[1:]
		}
	}
	var user struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if len(messages) == 0 || json.Unmarshal(messages[0], &user) != nil || user.Role != "user" {
		f.t.Fatalf("request %d: the conversation does not start with the prompt", i)
	}
	s.User = user.Content
	return s
}

// toolResult is a tool result the agent sent back.
type toolResult struct {
	ID      string
	Content string
	IsError bool
}

// results returns the tool results at the end of request i, and the ids
// of the calls in the assistant message before them.
func (f *fake) results(i int) (calls []string, results []toolResult) {
	f.t.Helper()
	msgs := f.decode(i).Messages
	if f.provider == OpenAI {
		type msg struct {
			Role       string  `json:"role"`
			Content    *string `json:"content"`
			ToolCallID string  `json:"tool_call_id"`
			ToolCalls  []struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"tool_calls"`
		}
		j := len(msgs)
		for j > 0 {
			var m msg
			json.Unmarshal(msgs[j-1], &m)
			if m.Role != "tool" {
				break
			}
			j--
		}
		for _, raw := range msgs[j:] {
			var m msg
			json.Unmarshal(raw, &m)
			text := ""
			if m.Content != nil {
				text = *m.Content
			}
			results = append(results, toolResult{ID: m.ToolCallID, Content: strings.TrimPrefix(text, "Error: "), IsError: strings.HasPrefix(text, "Error: ")})
		}
		if j == 0 {
			f.t.Fatalf("request %d: no assistant message before the results", i)
		}
		var m msg
		json.Unmarshal(msgs[j-1], &m)
		if m.Role != "assistant" {
			f.t.Fatalf("request %d: %q before the results", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			if c.Type != "function" {
				f.t.Errorf("request %d: tool call type %q", i, c.Type)
			}
			calls = append(calls, c.ID)
		}
		return calls, results
	}
	if len(msgs) < 3 {
		f.t.Fatalf("request %d has %d messages", i, len(msgs))
	}
	var last struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   string `json:"content"`
			IsError   bool   `json:"is_error"`
		} `json:"content"`
	}
	if err := json.Unmarshal(msgs[len(msgs)-1], &last); err != nil || last.Role != "user" {
		f.t.Fatalf("request %d: the last message is not a user message of blocks: %v", i, err)
	}
	for _, b := range last.Content {
		if b.Type != "tool_result" {
			f.t.Errorf("request %d: a %q block among the results", i, b.Type)
		}
		results = append(results, toolResult{ID: b.ToolUseID, Content: b.Content, IsError: b.IsError})
	}
	var prev struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(msgs[len(msgs)-2], &prev); err != nil || prev.Role != "assistant" {
		f.t.Fatalf("request %d: no assistant message before the results", i)
	}
	var blocks []struct{ Type, ID string }
	json.Unmarshal(prev.Content, &blocks)
	for _, b := range blocks {
		if b.Type == "tool_use" {
			calls = append(calls, b.ID)
		}
	}
	// The assistant turn goes back exactly as it came.
	f.mu.Lock()
	defer f.mu.Unlock()
	if want := f.sent[i-1]; string(prev.Content) != want {
		f.t.Errorf("request %d: the assistant content was changed:\n got %s\nwant %s", i, prev.Content, want)
	}
	return calls, results
}

func callInput(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(data)
}
