package site_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
)

// recordedAssistant is a TEST FIXTURE, not the assistant: it answers
// POST /discovery/v2/assistant/{domain}/message with a recorded AI SDK v5
// UI message stream (a search tool call whose output is the store's hits
// for the question, or sources the test gives, then the scripted text
// deltas), issues and checks thread IDs and keys, and answers the CORS
// preflight for one origin. It sends what the server never does (links
// that are no site path or http(s) URL, a stream that ends without its
// finish), to show the panel holds against them.
type recordedAssistant struct {
	t *testing.T
	e *env

	mu      sync.Mutex
	key     string // the assistant key it takes
	origin  string // the page origin it allows
	turns   []fixtureTurn
	threads map[string]string // thread ID to key
}

// allow sets the key the fixture takes and the origin it allows.
func (f *recordedAssistant) allow(key, origin string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key, f.origin = key, origin
}

// fixtureTurn is one scripted answer.
type fixtureTurn struct {
	deltas  []string
	sources []map[string]any // the search's output, if not the store's hits
	early   bool             // the stream ends after the deltas, cleanly, unfinished
}

// answerUnfinished scripts an answer whose stream ends after its deltas
// without an error or its finish event, the connection closed cleanly.
func (f *recordedAssistant) answerUnfinished(deltas ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.turns = append(f.turns, fixtureTurn{deltas: deltas, early: true})
}

// answerSources scripts an answer whose search tool lists sources.
func (f *recordedAssistant) answerSources(sources []map[string]any, deltas ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.turns = append(f.turns, fixtureTurn{deltas: deltas, sources: sources})
}

func (f *recordedAssistant) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	key, origin := f.key, f.origin
	f.mu.Unlock()
	if r.Header.Get("Origin") != origin {
		http.Error(w, `{"message":"origin not allowed"}`, http.StatusForbidden)
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Access-Control-Expose-Headers", "X-Thread-Id, X-Thread-Key")
	if r.Header.Get("Authorization") != "Bearer "+key {
		http.Error(w, `{"message":"bad key"}`, http.StatusUnauthorized)
		return
	}
	var body askBody
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil || body.question() == "" {
		http.Error(w, `{"message":"bad body"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	if f.threads == nil {
		f.threads = map[string]string{}
	}
	thread := body.ThreadID
	if thread != "" && f.threads[thread] != body.ThreadKey {
		f.mu.Unlock()
		http.Error(w, `{"message":"thread not found"}`, http.StatusNotFound)
		return
	}
	if thread == "" {
		thread = fmt.Sprintf("thread%d", len(f.threads)+1)
		key := fmt.Sprintf("key%d", len(f.threads)+1)
		f.threads[thread] = key
		w.Header().Set("X-Thread-Id", thread)
		w.Header().Set("X-Thread-Key", key)
	}
	if len(f.turns) == 0 {
		f.mu.Unlock()
		f.t.Errorf("the fixture was asked %q with no answer scripted", body.question())
		http.Error(w, `{"message":"no answer scripted"}`, http.StatusInternalServerError)
		return
	}
	turn := f.turns[0]
	f.turns = f.turns[1:]
	f.mu.Unlock()

	hits, err := f.e.Store.SearchDocs(r.Context(), store.DocsQuery{ProjectID: "gamma", Query: body.question(), Limit: 5})
	if err != nil {
		f.t.Errorf("SearchDocs: %v", err)
	}
	sources := []map[string]any{}
	for _, h := range hits {
		href := h.Path
		if h.Anchor != "" {
			href += "#" + h.Anchor
		}
		sources = append(sources, map[string]any{"content": h.Snippet, "path": h.Path, "metadata": map[string]any{"title": h.Title, "heading": h.Heading, "href": href}})
	}
	if turn.sources != nil {
		sources = turn.sources
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	rc := http.NewResponseController(w)
	send := func(ev map[string]any) {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "data: %s\n\n", b)
		rc.Flush()
	}
	send(map[string]any{"type": "start", "messageId": "msg1"})
	send(map[string]any{"type": "start-step"})
	send(map[string]any{"type": "tool-input-start", "toolCallId": "call1", "toolName": "search"})
	send(map[string]any{"type": "tool-input-available", "toolCallId": "call1", "toolName": "search", "input": map[string]any{"query": body.question()}})
	send(map[string]any{"type": "tool-output-available", "toolCallId": "call1", "output": sources})
	send(map[string]any{"type": "finish-step"})
	send(map[string]any{"type": "start-step"})
	send(map[string]any{"type": "text-start", "id": "text1"})
	for _, d := range turn.deltas {
		send(map[string]any{"type": "text-delta", "id": "text1", "delta": d})
	}
	if turn.early {
		return
	}
	send(map[string]any{"type": "text-end", "id": "text1"})
	send(map[string]any{"type": "finish-step"})
	send(map[string]any{"type": "finish", "messageMetadata": map[string]any{"threadId": thread}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// fixtureRoutes sends the assistant endpoint's requests to f, the rest
// to next.
func fixtureRoutes(f *recordedAssistant, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/discovery/v2/assistant/") {
			f.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
