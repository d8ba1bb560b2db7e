package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tests run the program against a double of the Assistant API's
// message endpoint, written from the platform's published document and
// embedding guide: POST /discovery/v2/assistant/{domain}/message with an
// assistant key; a new thread's ID and key in the X-Thread-Id and
// X-Thread-Key headers; a follow-up sends both in its body, and a thread ID
// without its key is answered 404 {message}; the answer is an AI SDK v5 UI
// message stream whose search tool call lists the sources.

const assistantKey = "mint_dsc_exampleKey"

type double struct {
	mu      sync.Mutex
	threads map[string]string // thread ID to key
	asked   [][]string        // each thread's questions, by the thread's order
	cut     bool              // end the stream before its finish
}

func (d *double) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/discovery/v2/assistant/acme/message" {
		http.Error(w, `{"message":"no route"}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+assistantKey {
		http.Error(w, `{"message":"invalid key"}`, http.StatusUnauthorized)
		return
	}
	var body struct {
		FP        string `json:"fp"`
		ThreadID  string `json:"threadId"`
		ThreadKey string `json:"threadKey"`
		Messages  []struct {
			Role  string `json:"role"`
			Parts []struct{ Type, Text string }
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.FP == "" || len(body.Messages) == 0 {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"message":"invalid body"}`)
		return
	}
	question := body.Messages[len(body.Messages)-1].Parts[0].Text
	d.mu.Lock()
	if d.threads == nil {
		d.threads = map[string]string{}
	}
	id := body.ThreadID
	switch {
	case id == "":
		id = fmt.Sprintf("thr-%d", len(d.threads)+1)
		d.threads[id] = "key-of-" + id
		d.asked = append(d.asked, nil)
		w.Header().Set("X-Thread-Id", id)
		w.Header().Set("X-Thread-Key", d.threads[id])
	case d.threads[id] == "" || d.threads[id] != body.ThreadKey:
		d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"Thread not found"}`)
		return
	}
	var n int
	fmt.Sscanf(id, "thr-%d", &n)
	d.asked[n-1] = append(d.asked[n-1], question)
	turn := len(d.asked[n-1])
	cut := d.cut
	d.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	send := func(event string) { io.WriteString(w, "data: "+event+"\n\n"); w.(http.Flusher).Flush() }
	send(`{"type":"start","messageId":"m1"}`)
	send(`{"type":"tool-input-start","toolCallId":"c1","toolName":"search"}`)
	send(`{"type":"tool-input-available","toolCallId":"c1","toolName":"search","input":{"query":"install"}}`)
	send(`{"type":"tool-output-available","toolCallId":"c1","output":[{"path":"quickstart","content":"npm i -g mint","metadata":{"title":"Quickstart"}},{"url":"https://acme.dev/windows","content":"On Windows","metadata":{}}]}`)
	send(`{"type":"text-start","id":"t1"}`)
	for _, piece := range []string{"Answer ", fmt.Sprint(turn), " of ", id, "."} {
		send(`{"type":"text-delta","id":"t1","delta":"` + piece + `"}`)
	}
	if cut {
		return
	}
	send(`{"type":"text-end","id":"t1"}`)
	send(`{"type":"finish","threadId":"` + id + `"}`)
	io.WriteString(w, "data: [DONE]\n\n")
}

func start(t *testing.T) (*double, config) {
	t.Helper()
	d := &double{}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return d, config{key: assistantKey, baseURL: srv.URL, domain: "acme"}
}

func TestAskAndFollowUp(t *testing.T) {
	d, cfg := start(t)
	cfg.threadFile = filepath.Join(t.TempDir(), "thread")
	cfg.question = "How do I install the CLI?"
	var out strings.Builder
	if err := run(context.Background(), cfg, &out); err != nil {
		t.Fatal(err)
	}
	want := "Answer 1 of thr-1.\nSources:\n  Quickstart  quickstart\n  (untitled)  https://acme.dev/windows\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	saved, err := os.ReadFile(cfg.threadFile)
	if err != nil || string(saved) != "thr-1\nkey-of-thr-1\n" {
		t.Errorf("thread file = %q, %v", saved, err)
	}
	if info, err := os.Stat(cfg.threadFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("thread file mode = %v, %v; want 0600", info.Mode(), err)
	}

	// The follow-up continues the thread with its ID and key.
	out.Reset()
	cfg.question = "And on Windows?"
	if err := run(context.Background(), cfg, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Answer 2 of thr-1.\n") {
		t.Errorf("follow-up output:\n%s", out.String())
	}
	if got := d.asked[0]; len(got) != 2 || got[1] != "And on Windows?" {
		t.Errorf("the double's thread holds %q", got)
	}
	if strings.Contains(out.String(), "key-of-") {
		t.Error("the output shows the thread key")
	}

	// A key the service does not know says what to do.
	os.WriteFile(cfg.threadFile, []byte("thr-1\nwrong\n"), 0o600)
	err = run(context.Background(), cfg, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "delete "+cfg.threadFile) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("unknown thread: %v", err)
	}
}

func TestAnswerCutShort(t *testing.T) {
	d, cfg := start(t)
	d.cut = true
	cfg.question = "How?"
	var out strings.Builder
	err := run(context.Background(), cfg, &out)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("run = %v; want the answer reported cut short", err)
	}
	if !strings.HasPrefix(out.String(), "Answer 1 of thr-1.") {
		t.Errorf("output before the cut: %q", out.String())
	}
}

func TestArguments(t *testing.T) {
	_, cfg := start(t)
	for name, c := range map[string]config{
		"no key":      {domain: "acme", question: "q"},
		"no domain":   {key: assistantKey, question: "q"},
		"no question": {key: assistantKey, domain: "acme"},
		"admin key":   {key: "mint_admin", domain: "acme", question: "q", baseURL: cfg.baseURL},
	} {
		if err := run(context.Background(), c, io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	bad := filepath.Join(t.TempDir(), "thread")
	os.WriteFile(bad, []byte("only one line\n"), 0o600)
	cfg.threadFile, cfg.question = bad, "q"
	if err := run(context.Background(), cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("a bad thread file: %v", err)
	}
}
