package docsapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

const threadKeySecret = "tk_SENTINEL9b2eTHREADkeyNoLeak"

// checkNoThreadKey fails the test if s holds the thread key, or any
// 8-byte window of it, raw or hex-encoded.
func checkNoThreadKey(t *testing.T, where, s string) {
	t.Helper()
	for i := 0; i+8 <= len(threadKeySecret); i++ {
		w := threadKeySecret[i : i+8]
		for _, form := range []string{w, hex.EncodeToString([]byte(w)), strings.ToUpper(hex.EncodeToString([]byte(w)))} {
			if strings.Contains(s, form) {
				t.Errorf("%s holds the thread key (%q)", where, form)
				return
			}
		}
	}
}

// The body of a new thread's question and of a follow-up, as the
// published document describes them (fp, threadId, messages with parts,
// retrievalPageSize, filter, context, currentPath) and the embedding guide
// adds (threadKey).
func TestAskRequest(t *testing.T) {
	c, mt := newAssistantClient(t)
	rec := serve(t, mt, on(http.MethodPost, askPathAcme, replyStreamString(sse(`{"type":"finish"}`))))
	ctx := context.Background()
	at := time.Date(2026, 8, 1, 12, 0, 0, 0, plusTwo)
	full := AskParams{
		Messages: []AskMessage{
			{ID: "m1", Role: AssistantRoleSystem, Text: "Answer briefly."},
			{ID: "m2", Text: "How do I install the CLI?", CreatedAt: at},
			{ID: "m3", Role: AssistantRoleAssistant, Text: "With npm."},
			{Text: "And on Windows?"},
		},
		FP:                "user-42",
		ThreadID:          "thr-1",
		ThreadKey:         NewThreadKey(threadKeySecret),
		RetrievalPageSize: 5,
		Filter:            AskFilter{Version: "v2", Language: "en", Groups: []string{"staff"}},
		Context: []AskContext{
			{Type: AskContextCode, Value: "npm i mint", Path: "quickstart", ElementID: "code-1"},
			{Type: AskContextTextSelection, Value: "the CLI"},
		},
		CurrentPath: "/quickstart",
	}
	if _, err := c.Assistant.Answer(ctx, "acme", full); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Assistant.Answer(ctx, "acme", AskParams{Messages: []AskMessage{{Text: "Hi"}}}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	// The ID of a message without one is random: check its form, then
	// compare the rest.
	var sent struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
	}
	json.Unmarshal([]byte(reqs[0].Body), &sent)
	made := sent.Messages[3].ID
	if !regexp.MustCompile(`^[A-Z2-7]{26}$`).MatchString(made) {
		t.Errorf("a made message ID is %q", made)
	}
	jsonEqual(t, "follow-up body", reqs[0].Body, `{
		"fp":"user-42","threadId":"thr-1","threadKey":"`+threadKeySecret+`",
		"messages":[
			{"id":"m1","role":"system","parts":[{"type":"text","text":"Answer briefly."}]},
			{"id":"m2","role":"user","createdAt":"2026-08-01T10:00:00Z","parts":[{"type":"text","text":"How do I install the CLI?"}]},
			{"id":"m3","role":"assistant","parts":[{"type":"text","text":"With npm."}]},
			{"id":"`+made+`","role":"user","parts":[{"type":"text","text":"And on Windows?"}]}
		],
		"retrievalPageSize":5,
		"filter":{"version":"v2","language":"en","groups":["staff"]},
		"context":[
			{"type":"code","value":"npm i mint","path":"quickstart","elementId":"code-1"},
			{"type":"textSelection","value":"the CLI"}
		],
		"currentPath":"/quickstart"}`)
	body := reqs[1].Body
	json.Unmarshal([]byte(body), &sent)
	jsonEqual(t, "new thread body", body, `{"fp":"anonymous","messages":[{"id":"`+sent.Messages[0].ID+`","role":"user","parts":[{"type":"text","text":"Hi"}]}]}`)
	for _, r := range reqs {
		if got := r.Header.Get("Accept"); got != "text/event-stream" {
			t.Errorf("Accept = %q, want text/event-stream", got)
		}
		if got := r.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type = %q", got)
		}
	}
}

func TestAskValidation(t *testing.T) {
	c, mt := newAssistantClient(t)
	hi := []AskMessage{{Text: "Hi"}}
	long := strings.Repeat("a", 199) + "🚀" // 201 UTF-16 code units
	tests := []struct {
		name   string
		domain string
		params AskParams
		param  string
	}{
		{"no messages", "acme", AskParams{}, "messages"},
		{"empty text", "acme", AskParams{Messages: []AskMessage{{Text: "Hi"}, {Text: " "}}}, "messages[1].text"},
		{"invalid UTF-8", "acme", AskParams{Messages: []AskMessage{{Text: "\xff"}}}, "messages[0].text"},
		{"thread ID alone", "acme", AskParams{Messages: hi, ThreadID: "thr"}, "threadKey"},
		{"thread key alone", "acme", AskParams{Messages: hi, ThreadKey: NewThreadKey(threadKeySecret)}, "threadId"},
		{"thread ID with spaces", "acme", AskParams{Messages: hi, ThreadID: " thr", ThreadKey: NewThreadKey(threadKeySecret)}, "threadId"},
		{"thread key with spaces", "acme", AskParams{Messages: hi, ThreadID: "thr", ThreadKey: NewThreadKey(threadKeySecret + "\n")}, "threadKey"},
		{"negative page size", "acme", AskParams{Messages: hi, RetrievalPageSize: -1}, "retrievalPageSize"},
		{"long current path", "acme", AskParams{Messages: hi, CurrentPath: long}, "currentPath"},
		{"empty group", "acme", AskParams{Messages: hi, Filter: AskFilter{Groups: []string{""}}}, "filter.groups"},
		{"context without type", "acme", AskParams{Messages: hi, Context: []AskContext{{Value: "x"}}}, "context[0].type"},
		{"context without value", "acme", AskParams{Messages: hi, Context: []AskContext{{Type: AskContextCode}}}, "context[0].value"},
		{"no domain", "", AskParams{Messages: hi}, "domain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Assistant.Ask(context.Background(), tt.domain, tt.params)
			var v *ValidationError
			if !errors.As(err, &v) || v.Param != tt.param {
				t.Fatalf("Ask = %v, want a ValidationError of %s", err, tt.param)
			}
			checkNoThreadKey(t, "the error", err.Error())
		})
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	// At the bound, a path is valid.
	mt.RegisterNoResponder(replyStreamString(sse(`{"type":"finish"}`)))
	if _, err := c.Assistant.Answer(context.Background(), "acme", AskParams{Messages: hi, CurrentPath: strings.Repeat("a", 198) + "🚀"}); err != nil {
		t.Errorf("a path of 200 code units: %v", err)
	}
	if !AskContextCode.Known() || !AskContextTextSelection.Known() || AskContextType("image").Known() {
		t.Error("AskContextType.Known is wrong")
	}
}

// Each Assistant API call refuses a client with an admin key before
// anything is sent, naming both kinds and not the key; and the admin calls
// refuse the assistant's client.
func TestAssistantCallsRefuseAnAdminKey(t *testing.T) {
	c, mt := newTestClient(t)
	ctx := context.Background()
	calls := map[string]func() error{
		"Search": func() error { return errOf(c.Assistant.Search(ctx, "acme", SearchParams{Query: "q"})) },
		"Page":   func() error { return errOf(c.Assistant.Page(ctx, "acme", PageParams{Path: "a"})) },
		"Ask":    func() error { return errOf(c.Assistant.Ask(ctx, "acme", askHello)) },
		"Answer": func() error { return errOf(c.Assistant.Answer(ctx, "acme", askHello)) },
	}
	for name, call := range calls {
		err := call()
		var v *ValidationError
		if !errors.As(err, &v) || v.Param != "apiKey" {
			t.Errorf("%s with an admin key = %v, want a ValidationError of apiKey", name, err)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"is an admin API key (mint_...)", "needs an assistant key (mint_dsc_...)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the error %q does not say %q", name, msg, want)
			}
		}
		checkNoLeak(t, name+"'s error", msg)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests were sent", n)
	}

	a, amt := newAssistantClient(t)
	if _, err := a.Analytics.Views(ctx, "proj", ViewsParams{}); !errors.Is(err, ErrInvalidParam) || strings.Contains(err.Error(), "SENTINEL") {
		t.Errorf("Views with an assistant key = %v", err)
	}
	if n := amt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests were sent with the assistant key", n)
	}
}

// The thread key is printed redacted in every form, by every path it
// takes: the params, the stream, the answer, the logs, and an error body
// a server echoes it in.
func TestRedactionThreadKey(t *testing.T) {
	k := NewThreadKey(threadKeySecret)
	for _, verb := range append(printVerbs, "%10s", "%t", "%p", "%e") {
		want := "[REDACTED]"
		switch verb {
		case "%#v":
			want = `"[REDACTED]"`
		case "%p", "%t", "%e":
			want = ""
		}
		got := fmt.Sprintf(verb, k)
		checkNoThreadKey(t, "ThreadKey printed with "+verb, got)
		if want != "" && got != want {
			t.Errorf("Sprintf(%s) = %q, want %q", verb, got, want)
		}
	}
	if got := fmt.Sprint(NewThreadKey("")); got != "" {
		t.Errorf("no key prints %q, want nothing", got)
	}
	if b, _ := json.Marshal(map[string]ThreadKey{"k": k}); string(b) != `{"k":"[REDACTED]"}` {
		t.Errorf("JSON = %s", b)
	}

	logger, buf := printingLogger()
	c, mt := newAssistantClient(t, WithLogger(logger))
	rec := serve(t, mt, on(http.MethodPost, askPathAcme,
		replyStreamString(sse(`{"type":"text-delta","id":"t","delta":"Hi"}`, `{"type":"finish"}`), "X-Thread-Id", "thr-1", "X-Thread-Key", threadKeySecret),
		replyJSON(404, `{"message":"no thread thr-1 with key `+threadKeySecret+`"}`, "X-Request-Id", "rq-1"),
		replyJSON(503, `{"message":"down; key `+threadKeySecret+`"}`),
	))
	ctx := context.Background()
	var resp Response
	s, err := c.Assistant.Ask(ctx, "acme", askHello, WithResponse(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if !s.ThreadKey().Equal(k) || s.ThreadKey().Value() != threadKeySecret {
		t.Error("ThreadKey is not the header's")
	}
	checkPrinted := func(name string, v any) {
		t.Helper()
		for _, verb := range append(printVerbs, "%10s", "%t", "%p", "%e") {
			checkNoThreadKey(t, fmt.Sprintf("%s printed with %s", name, verb), fmt.Sprintf(verb, v))
		}
		lg, b := printingLogger()
		lg.Info("value", slog.Any("v", v))
		checkNoThreadKey(t, name+" logged", b.String())
	}
	checkPrinted("*AnswerStream", s)
	checkPrinted("Response", resp)
	ans, err := s.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if !ans.ThreadKey.Equal(k) {
		t.Error("the answer's key is not the header's")
	}
	checkPrinted("*AssistantAnswer", ans)
	checkPrinted("AssistantAnswer", *ans)

	follow := AskParams{Messages: askHello.Messages, ThreadID: "thr-1", ThreadKey: ans.ThreadKey}
	checkPrinted("AskParams", follow)
	_, err = c.Assistant.Ask(ctx, "acme", follow)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("the 404 = %v", err)
	}
	apiErr := asAPIError(t, err)
	checkPrinted("the 404's error", err)
	checkNoThreadKey(t, "the 404's Body", apiErr.Body)
	if want := "no thread thr-1 with key [REDACTED]"; apiErr.Message != want {
		t.Errorf("Message = %q, want %q", apiErr.Message, want)
	}
	_, err = c.Assistant.Ask(ctx, "acme", follow)
	checkPrinted("the 503's error", err)
	checkNoThreadKey(t, "the logs", buf.String())
	if !strings.Contains(buf.String(), "no thread thr-1 with key [REDACTED]") {
		t.Errorf("the logs do not show the scrubbed message:\n%s", buf.String())
	}
	// The key was sent, where it belongs.
	if reqs := rec.Requests(); len(reqs) != 3 || !strings.Contains(reqs[1].Body, `"threadKey":"`+threadKeySecret+`"`) {
		t.Errorf("the follow-up did not send the key")
	}
}
