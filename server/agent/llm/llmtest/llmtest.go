// Package llmtest is a fake model provider for tests: an HTTP server that
// streams scripted answers in both wire formats the llm package speaks,
// OpenAI-compatible chat completions (POST .../chat/completions) and the
// Anthropic Messages API (POST .../v1/messages), and records the requests
// it received.
//
// A reply can be slowed (a delay before the first delta, a gap between
// deltas, a hold after the first delta until the test releases it), cut
// (the connection closed with no proper end), ended by an error event, or
// replaced by an error answer. Nothing sleeps but the scripted delays.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultAnswer is the text of the reply sent when the script is empty.
const DefaultAnswer = "This is the fake model's answer."

// The default reply's deltas and usage.
var defaultDeltas = []string{"This is ", "the fake model's ", "answer."}

const (
	defaultInputTokens  = 12
	defaultOutputTokens = 8
)

// Protocols, as Request.Protocol names them.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// Reply is one scripted answer.
type Reply struct {
	// Deltas are the text deltas, sent in order, each in its own event.
	Deltas []string
	// FirstDelay is the wait before the first byte of the body (the
	// headers are sent at once); Gap the wait between two deltas.
	FirstDelay, Gap time.Duration
	// Hold, if set, is waited for after the first delta, before the rest.
	Hold <-chan struct{}
	// Cut closes the connection after the deltas, with no proper end. With
	// no deltas it closes it before the first byte of the body.
	Cut bool
	// StreamError, if set, ends the stream after the deltas with the
	// provider's error event carrying this message.
	StreamError string
	// Refusal is sent after the deltas as OpenAI's refusal deltas, or as
	// Anthropic text ending with the stop reason "refusal".
	Refusal string
	// Thinking is sent before the text, as an Anthropic thinking block or
	// as the reasoning_content deltas some OpenAI-compatible servers send:
	// it is not part of the answer.
	Thinking string

	// Status, if set, makes the reply an error answer with this status,
	// Body (default: an error in the provider's format) and RetryAfter as
	// the Retry-After header.
	Status     int
	Body       string
	RetryAfter string

	// InputTokens and OutputTokens are the usage reported; NoUsage sends
	// none (OpenAI: no usage chunk, as some compatible servers do;
	// Anthropic: no usage objects).
	InputTokens, OutputTokens int64
	NoUsage                   bool
	// Stop is the stop reason: "stop" (the default), "length" and
	// "content-filter" are translated into the provider's; anything else
	// is sent as it is.
	Stop string

	// Raw, if set, is sent as the whole body of a 200 event stream instead
	// of events built from the fields above.
	Raw string
}

// Request is a request the server received.
type Request struct {
	// Protocol is OpenAI or Anthropic, from the path.
	Protocol string
	Method   string
	Path     string
	Header   http.Header
	// Body is the raw JSON body.
	Body []byte
	// Disconnected is closed when the server saw the client go away while
	// the reply was still being sent (waiting for a delay or a hold).
	Disconnected <-chan struct{}
}

// Message is a message of a request, its content's text parts joined.
type Message struct {
	Role, Content string
}

// Server is the fake provider.
type Server struct {
	srv  *httptest.Server
	done chan struct{}

	mu       sync.Mutex
	script   []Reply
	requests []Request
}

// New starts a server, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.done) // ends replies still holding, so that Close returns
		s.srv.Close()
	})
	return s
}

// URL is the base URL for llm.Config.BaseURL, for either provider: the
// server answers .../chat/completions and .../v1/messages under it.
func (s *Server) URL() string { return s.srv.URL }

// Script queues replies for the next requests, in order. When the queue
// is empty a request gets the default reply, DefaultAnswer in three deltas.
func (s *Server) Script(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// decode reads the body as a JSON object; nil if it is not one.
func (r Request) decode() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// Has reports whether the body's JSON object has the key, for checks such
// as "no tools were sent".
func (r Request) Has(key string) bool {
	_, ok := r.decode()[key]
	return ok
}

// Model is the body's model.
func (r Request) Model() string {
	s, _ := r.decode()["model"].(string)
	return s
}

// System is the system prompt: Anthropic's system field, or the OpenAI
// system messages' text.
func (r Request) System() string {
	m := r.decode()
	if r.Protocol == Anthropic {
		return text(m["system"])
	}
	var parts []string
	for _, msg := range list(m["messages"]) {
		if msg, _ := msg.(map[string]any); msg["role"] == "system" || msg["role"] == "developer" {
			parts = append(parts, text(msg["content"]))
		}
	}
	return strings.Join(parts, "\n")
}

// Messages are the conversation's messages, without OpenAI's system ones.
func (r Request) Messages() []Message {
	var out []Message
	for _, msg := range list(r.decode()["messages"]) {
		msg, _ := msg.(map[string]any)
		role, _ := msg["role"].(string)
		if role == "system" || role == "developer" {
			continue
		}
		out = append(out, Message{Role: role, Content: text(msg["content"])})
	}
	return out
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// text reads a content: a string, or blocks whose text parts are joined.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var parts []string
	for _, b := range list(v) {
		if b, _ := b.(map[string]any); b["type"] == "text" {
			s, _ := b["text"].(string)
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var proto string
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		proto = OpenAI
	case strings.HasSuffix(r.URL.Path, "/v1/messages"):
		proto = Anthropic
	default:
		http.NotFound(w, r)
		return
	}
	disconnected := make(chan struct{})
	req := Request{Protocol: proto, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Disconnected: disconnected}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	reply := Reply{Deltas: defaultDeltas, InputTokens: defaultInputTokens, OutputTokens: defaultOutputTokens}
	if len(s.script) > 0 {
		reply = s.script[0]
		s.script = s.script[1:]
	}
	s.mu.Unlock()

	if r.Method != http.MethodPost {
		http.Error(w, "only POST", http.StatusMethodNotAllowed)
		return
	}
	var sent struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		MaxTokens *int `json:"max_tokens"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		writeError(w, proto, http.StatusBadRequest, "the body is not JSON: "+err.Error())
		return
	}
	switch {
	case !sent.Stream:
		writeError(w, proto, http.StatusBadRequest, "this fake only streams: stream must be true")
		return
	case proto == Anthropic && r.Header.Get("Anthropic-Version") == "":
		writeError(w, proto, http.StatusBadRequest, "anthropic-version header is required")
		return
	case proto == Anthropic && sent.MaxTokens == nil:
		writeError(w, proto, http.StatusBadRequest, "max_tokens: Field required")
		return
	}

	if reply.Status != 0 {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		if reply.Body != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(reply.Status)
			io.WriteString(w, reply.Body)
			return
		}
		writeError(w, proto, reply.Status, "fake error")
		return
	}

	st := &stream{w: w, r: r, s: s, disconnected: disconnected}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	st.flush()
	if !st.wait(reply.FirstDelay) {
		return
	}
	if reply.Raw != "" {
		io.WriteString(w, reply.Raw)
		return
	}
	if reply.Cut && len(reply.Deltas) == 0 {
		panic(http.ErrAbortHandler)
	}
	if proto == OpenAI {
		st.openAI(reply, sent.StreamOptions.IncludeUsage)
	} else {
		st.anthropic(reply)
	}
}

func writeError(w http.ResponseWriter, proto string, status int, msg string) {
	var body any
	if proto == OpenAI {
		body = map[string]any{"error": map[string]any{"message": msg, "type": "fake_error", "code": nil}}
	} else {
		body = map[string]any{"type": "error", "error": map[string]any{"type": "fake_error", "message": msg}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// stream writes one reply's events.
type stream struct {
	w            http.ResponseWriter
	r            *http.Request
	s            *Server
	disconnected chan struct{}
}

func (st *stream) flush() {
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// event writes one event and flushes it, so that it leaves at once.
func (st *stream) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if name != "" {
		fmt.Fprintf(st.w, "event: %s\n", name)
	}
	fmt.Fprintf(st.w, "data: %s\n\n", b)
	st.flush()
}

// until waits for c, and reports false when the client went away or the
// server is closing first.
func until[T any](st *stream, c <-chan T) bool {
	select {
	case <-c:
		return true
	case <-st.r.Context().Done():
		close(st.disconnected)
		return false
	case <-st.s.done:
		return false
	}
}

// wait waits for d, as until does.
func (st *stream) wait(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	return until(st, t.C)
}

// deltas sends the text deltas with the reply's pacing; false when the
// client went away.
func (st *stream) deltas(reply Reply, send func(string)) bool {
	for i, d := range reply.Deltas {
		if i > 0 && !st.wait(reply.Gap) {
			return false
		}
		send(d)
		if i == 0 && reply.Hold != nil && !until(st, reply.Hold) {
			return false
		}
	}
	return true
}

func stopReason(proto, stop string) string {
	openAI := proto == OpenAI
	switch stop {
	case "", "stop":
		if openAI {
			return "stop"
		}
		return "end_turn"
	case "length":
		if openAI {
			return "length"
		}
		return "max_tokens"
	case "content-filter":
		if openAI {
			return "content_filter"
		}
		return "refusal"
	}
	return stop
}

func (st *stream) openAI(reply Reply, includeUsage bool) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	st.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if reply.Thinking != "" {
		st.event("", chunk(map[string]any{"reasoning_content": reply.Thinking}, nil))
	}
	if !st.deltas(reply, func(d string) { st.event("", chunk(map[string]any{"content": d}, nil)) }) {
		return
	}
	if reply.Refusal != "" {
		st.event("", chunk(map[string]any{"refusal": reply.Refusal}, nil))
	}
	if reply.Cut {
		panic(http.ErrAbortHandler)
	}
	if reply.StreamError != "" {
		st.event("", map[string]any{"error": map[string]any{"message": reply.StreamError, "type": "server_error", "code": nil}})
		return
	}
	st.event("", chunk(map[string]any{}, stopReason(OpenAI, reply.Stop)))
	if includeUsage && !reply.NoUsage {
		st.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": reply.InputTokens, "completion_tokens": reply.OutputTokens,
				"total_tokens": reply.InputTokens + reply.OutputTokens}})
	}
	io.WriteString(st.w, "data: [DONE]\n\n")
	st.flush()
}

func (st *stream) anthropic(reply Reply) {
	message := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil}
	if !reply.NoUsage {
		message["usage"] = map[string]any{"input_tokens": reply.InputTokens, "output_tokens": 1}
	}
	st.event("message_start", map[string]any{"type": "message_start", "message": message})
	index := 0
	if reply.Thinking != "" {
		st.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "thinking", "thinking": ""}})
		st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "thinking_delta", "thinking": reply.Thinking}})
		st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "signature_delta", "signature": "fake-signature"}})
		st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	st.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
		"content_block": map[string]any{"type": "text", "text": ""}})
	st.event("ping", map[string]any{"type": "ping"})
	textDelta := func(d string) {
		st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "text_delta", "text": d}})
	}
	if !st.deltas(reply, textDelta) {
		return
	}
	stop := stopReason(Anthropic, reply.Stop)
	if reply.Refusal != "" {
		textDelta(reply.Refusal)
		stop = "refusal"
	}
	if reply.Cut {
		panic(http.ErrAbortHandler)
	}
	if reply.StreamError != "" {
		st.event("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": reply.StreamError}})
		return
	}
	st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	delta := map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}}
	if !reply.NoUsage {
		delta["usage"] = map[string]any{"output_tokens": reply.OutputTokens}
	}
	st.event("message_delta", delta)
	st.event("message_stop", map[string]any{"type": "message_stop"})
}
