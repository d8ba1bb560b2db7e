package assistant_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/agent/llm/llmtest"
	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// TestAIClientReadsTheAnswer is the npm client test: the ai package's own
// reader (ask.mjs on node) asks the real server (SQLite, the docs index,
// the assistant's model client on a fake provider of each protocol) a
// question and a follow-up, as a page using useChat does, and must see
// each answer's text, the search tool's sources, and the finish with the
// thread's ID; the package fails on any chunk its schema refuses.
func TestAIClientReadsTheAnswer(t *testing.T) {
	node := servertest.FindNode(t, aiClientDir)
	site, err := docs.Read(fstest.MapFS{
		"theming.md": {Data: []byte("---\ntitle: Theming\n---\n\nThe widget takes the site's colours.\n\n## Accent colour\n\nSet the widget's accent colour with the accentColor option in docs.json; any CSS colour works.\n")},
	}, docs.Options{ProjectID: servertest.AssistantProject})
	if err != nil {
		t.Fatal(err)
	}
	answers := [][]string{
		{"Set ", "`accentColor` ", "in docs.json — ✓ ünïcode"},
		{"Yes: ", "any CSS colour."},
	}
	for _, provider := range []llm.Provider{llm.OpenAI, llm.Anthropic} {
		t.Run("provider="+string(provider), func(t *testing.T) {
			a := servertest.NewAssistant(t, provider, site.Pages)
			a.Model.Script(llmtest.Reply{Deltas: answers[0]}, llmtest.Reply{Deltas: answers[1]})
			url := a.Serve() + "/discovery/v2/assistant/" + servertest.AssistantDomain + "/message"
			questions := []string{"How do I set the widget accent colour?", "Which accent colour values does the widget accept?"}
			res := askWithAIClient(t, node, url, a.Keys["assistant"], "/theming", questions...)
			if res.Error != nil {
				t.Fatalf("the ai package: %s\nanswers: %+v", *res.Error, res.Answers)
			}
			if len(res.Answers) != 2 {
				t.Fatalf("%d answers", len(res.Answers))
			}
			first := res.Answers[0]
			threadID, _ := first.Headers["x-thread-id"].(string)
			if first.Status != 200 || !strings.HasPrefix(first.Headers["content-type"].(string), "text/event-stream") ||
				first.Headers["x-vercel-ai-ui-message-stream"] != "v1" || threadID == "" || first.Headers["x-thread-key-present"] != true {
				t.Errorf("first response: %d %v", first.Status, first.Headers)
			}
			exchanges, err := a.Store.ThreadExchanges(t.Context(), servertest.AssistantProject, threadID)
			if err != nil || len(exchanges) != 2 {
				t.Fatalf("the thread %q holds %d exchanges (%v), want 2", threadID, len(exchanges), err)
			}
			// The test's clock stands still: the two exchanges have the
			// same time, and are told apart by their questions.
			slices.SortFunc(exchanges, func(x, y store.Exchange) int {
				return slices.Index(questions, x.Question) - slices.Index(questions, y.Question)
			})
			for i, seen := range res.Answers {
				if want := strings.Join(answers[i], ""); seen.Text != want {
					t.Errorf("answer %d: text %q, want %q", i, seen.Text, want)
				}
				if seen.Metadata["threadId"] != threadID || seen.Finish["finishReason"] != "stop" {
					t.Errorf("answer %d: metadata %v, finish %v; want thread %q, finish reason stop", i, seen.Metadata, seen.Finish, threadID)
				}
				// The sources as the package holds them: the search tool's
				// output, the pages the server stored as the answer's.
				if len(seen.Tools) != 1 || seen.Tools[0].Name != "search" || seen.Tools[0].State != "output-available" {
					t.Fatalf("answer %d: tool parts %+v, want the search tool's output", i, seen.Tools)
				}
				var sources []struct {
					Path     string `json:"path"`
					Content  string `json:"content"`
					Metadata struct {
						Title string `json:"title"`
					} `json:"metadata"`
				}
				if err := json.Unmarshal(seen.Tools[0].Output, &sources); err != nil || len(sources) == 0 {
					t.Fatalf("answer %d: the search output %s is not a list of sources (%v)", i, seen.Tools[0].Output, err)
				}
				if sources[0].Metadata.Title != "Theming" || !strings.Contains(sources[0].Content, "accent colour") {
					t.Errorf("answer %d: first source %+v, want the Theming page's accent colour section", i, sources[0])
				}
				// The export names a source by its page's title and the
				// section's heading.
				ex := exchanges[i]
				if len(ex.Sources) != len(sources) {
					t.Errorf("answer %d: %d sources, the server stored %d", i, len(sources), len(ex.Sources))
				}
				for j := range min(len(sources), len(ex.Sources)) {
					if !strings.HasPrefix(ex.Sources[j].Title, sources[j].Metadata.Title) {
						t.Errorf("answer %d: source %d is %q, the server stored %q", i, j, sources[j].Metadata.Title, ex.Sources[j].Title)
					}
				}
				if ex.Question != questions[i] || ex.Resolution != store.Answered || ex.Answer != seen.Text {
					t.Errorf("answer %d: stored %q, %s, %q", i, ex.Question, ex.Resolution, ex.Answer)
				}
			}
			// A follow-up continues the thread: its key is not given again.
			if second := res.Answers[1]; second.Headers["x-thread-key-present"] != false {
				t.Errorf("follow-up's headers: %v", second.Headers)
			}
		})
	}
}
