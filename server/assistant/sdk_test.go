package assistant_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/agent/llm/llmtest"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// The SDK's Ask, a client this package did not write, reads the server's
// answers: the text, the sources, the thread's ID and key, and a
// follow-up with them.
func TestSDKAsk(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			a, _ := newEnv(t, p)
			a.Model.Script(llmtest.Reply{Deltas: []string{"Set ", "accentColor."}}, llmtest.Reply{Deltas: []string{"In ", "docs.json."}})
			c, err := docsapi.NewClient(a.Keys["assistant"], docsapi.WithBaseURL(a.Serve()), docsapi.WithRetryDelays(time.Millisecond, 5*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			ans, err := c.Assistant.Answer(t.Context(), servertest.AssistantDomain, docsapi.AskParams{
				Messages: []docsapi.AskMessage{{Text: widgetQuestion}}, CurrentPath: "/guide/quickstart",
			})
			if err != nil {
				t.Fatal(err)
			}
			if ans.Text != "Set accentColor." || ans.FinishReason != "stop" || ans.ThreadID == "" || ans.ThreadKey.IsZero() {
				t.Fatalf("answer %+v", ans)
			}
			if len(ans.Sources) == 0 || ans.Sources[0].Path != "/widget" || ans.Sources[0].Title != "Widget" || !strings.Contains(ans.Sources[0].Content, "accentColor") {
				t.Errorf("sources %+v", ans.Sources)
			}
			// A follow-up with the ID and key, read as a stream.
			stream, err := c.Assistant.Ask(t.Context(), servertest.AssistantDomain, docsapi.AskParams{
				Messages: []docsapi.AskMessage{{Text: widgetQuestion}, {Role: docsapi.AssistantRoleAssistant, Text: ans.Text}, {Text: "Which option sets the widget colour?"}},
				ThreadID: ans.ThreadID, ThreadKey: ans.ThreadKey,
			})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			var threadID string
			for ev, err := range stream.Events() {
				if err != nil {
					t.Fatal(err)
				}
				switch ev.Type {
				case docsapi.AssistantEventTextDelta:
					text.WriteString(ev.Delta)
				case docsapi.AssistantEventFinish:
					threadID = ev.ThreadID
				}
				if !ev.Type.Known() {
					t.Errorf("event type %q unknown to the SDK", ev.Type)
				}
			}
			if text.String() != "In docs.json." || threadID != ans.ThreadID || !stream.ThreadKey().IsZero() {
				t.Errorf("follow-up: text %q, thread %q (want %q), key given again %v", text.String(), threadID, ans.ThreadID, !stream.ThreadKey().IsZero())
			}
			if ms := a.Model.Requests()[1].Messages(); len(ms) != 3 || ms[1].Content != "Set accentColor." {
				t.Errorf("the follow-up's history: %q", ms)
			}
			// A wrong key is the API's 404.
			_, err = c.Assistant.Answer(t.Context(), servertest.AssistantDomain, docsapi.AskParams{
				Messages: []docsapi.AskMessage{{Text: widgetQuestion}}, ThreadID: ans.ThreadID, ThreadKey: docsapi.NewThreadKey("wrong"),
			})
			if !errors.Is(err, docsapi.ErrNotFound) {
				t.Errorf("a wrong key: %v, want not found", err)
			}
		})
	}
}

// A cut answer reaches the SDK as an answer with an error, the text sent
// before it kept.
func TestSDKReadsAFailedAnswer(t *testing.T) {
	a, _ := newEnv(t, llm.OpenAI)
	a.Model.Script(llmtest.Reply{Deltas: []string{"Set the "}, Cut: true})
	c, err := docsapi.NewClient(a.Keys["assistant"], docsapi.WithBaseURL(a.Serve()))
	if err != nil {
		t.Fatal(err)
	}
	ans, err := c.Assistant.Answer(t.Context(), servertest.AssistantDomain, docsapi.AskParams{Messages: []docsapi.AskMessage{{Text: widgetQuestion}}})
	var ae *docsapi.AnswerError
	if !errors.As(err, &ae) || errors.Is(err, io.ErrUnexpectedEOF) || ans.Text != "Set the " || ans.FinishReason != "error" || ans.ThreadID == "" {
		t.Errorf("answer %+v, error %v: want the partial text and an AnswerError", ans, err)
	}
}
