package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/agent/llm/llmtest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// The assistant's answer as a reader's browser receives it: the real
// server (SQLite, a documentation index), its real model client, and a
// fake model provider (llmtest) whose first token comes after a known
// delay, asked over HTTP and read as the stream comes. The target: the
// server adds at most 50 ms before the first text byte beyond the model's
// own first token, and passes each delta on as the model sends it.

// The model's pace in the benchmark: its first token after
// modelFirstToken, then a delta every modelGap.
const (
	modelFirstToken = 100 * time.Millisecond
	modelGap        = 20 * time.Millisecond
	modelDeltas     = 11
)

const (
	assistantProject = "handbook"
	assistantDomain  = "handbook-docs"
)

// assistantServer is a server with an assistant on an indexed project.
type assistantServer struct {
	url, key string
	model    *llmtest.Server
	client   *http.Client
}

// indexedStore returns a SQLite store with the project and its
// documentation index of pages.
func indexedStore(b testing.TB, pages []store.DocPage) store.Store {
	b.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "docsapi.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := st.CreateProject(ctx, store.Project{ID: assistantProject, Name: "Handbook", Domain: assistantDomain}); err != nil {
		b.Fatal(err)
	}
	u := store.DocsUpdate{ProjectID: assistantProject, Commit: "c1", At: time.Now(), Pages: pages, Replace: true}
	for _, p := range pages {
		u.Files = append(u.Files, store.DocFile{Path: p.File, Blob: "blob:" + p.File})
	}
	if err := st.UpdateDocs(ctx, u); err != nil {
		b.Fatal(err)
	}
	return st
}

// newAssistantServer serves st's project with an assistant whose model is
// a fake provider speaking provider's protocol, through the llm client
// the server uses for a real one, on a local listener.
func newAssistantServer(b testing.TB, st store.Store, provider llm.Provider) *assistantServer {
	b.Helper()
	fake := llmtest.New(b)
	agent, err := llm.New(llm.Config{Provider: provider, BaseURL: fake.URL(), Model: "fake-model", MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	// One client asks every question: the budgets per address would stop
	// it, as they would stop one reader asking this fast.
	plenty := server.Limit{Requests: 1_000_000, Per: time.Minute}
	srv, err := server.New(server.Config{
		Store: st,
		AssistantModel: func(store.Project) (server.AssistantModel, error) {
			return server.AssistantModel{Chat: agent}, nil
		},
		Assistant: server.AssistantConfig{
			PerAddress: plenty, PerProject: plenty, AskPerAddress: plenty,
			MaxExchangesPerDay: 1_000_000, DailyTokens: 1 << 40,
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	k, err := srv.CreateAssistantKey(context.Background(), server.AssistantKeyParams{Project: assistantProject, Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	return &assistantServer{url: hs.URL, key: k.Secret, model: fake, client: hs.Client()}
}

// timedAnswer is an answer as the client received it, its times counted
// from just before the request was sent.
type timedAnswer struct {
	firstDelta, lastDelta time.Duration
	deltas                int
	text                  string
	sources               int
	threadID              string
}

// ask posts question in a new thread and reads the answer's stream as it
// comes, noting when each text delta arrived. onDelta, if set, is called
// as each text delta arrives, with its number from 0.
func (a *assistantServer) ask(ctx context.Context, question string, onDelta func(int)) (timedAnswer, error) {
	body, _ := json.Marshal(map[string]any{
		"fp": "anonymous",
		"messages": []any{map[string]any{"id": "q", "role": "user",
			"parts": []any{map[string]any{"type": "text", "text": question}}}},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url+"/discovery/v2/assistant/"+assistantDomain+"/message", bytes.NewReader(body))
	if err != nil {
		return timedAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	var ans timedAnswer
	var text strings.Builder
	start := time.Now()
	resp, err := a.client.Do(req)
	if err != nil {
		return ans, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ans, fmt.Errorf("status %s", resp.Status)
	}
	// An event is one line, and the search's sources, snippets and all,
	// may pass bufio's default size.
	lines := bufio.NewReaderSize(resp.Body, 1<<20)
	for {
		line, err := lines.ReadSlice('\n')
		if err != nil {
			return ans, fmt.Errorf("the stream ended before [DONE]: %v", err)
		}
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			break
		}
		now := time.Since(start)
		var ev struct {
			Type            string          `json:"type"`
			Delta           string          `json:"delta"`
			Output          json.RawMessage `json:"output"`
			MessageMetadata struct {
				ThreadID string `json:"threadId"`
			} `json:"messageMetadata"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return ans, fmt.Errorf("an event is not JSON: %q", data)
		}
		switch ev.Type {
		case "text-delta":
			if ans.deltas == 0 {
				ans.firstDelta = now
			}
			ans.lastDelta = now
			text.WriteString(ev.Delta)
			if onDelta != nil {
				onDelta(ans.deltas)
			}
			ans.deltas++
		case "tool-output-available":
			var sources []json.RawMessage
			json.Unmarshal(ev.Output, &sources)
			ans.sources += len(sources)
		case "finish":
			ans.threadID = ev.MessageMetadata.ThreadID
		case "error":
			return ans, fmt.Errorf("an error event: %s", data)
		}
	}
	ans.text = text.String()
	return ans, nil
}

// The forms of the benchmark's questions (assistantQuestions).
const (
	// titleQuestion is a page's title: every word in its first section,
	// which the all-words search finds.
	titleQuestion = "title"
	// sentenceQuestion is a page's title in a sentence with its second
	// section's heading and the first two words of that section's text:
	// eight words, five of them in that section, none holding all, so
	// that only the fallback to the sections holding most of the words
	// finds it.
	sentenceQuestion = "sentence"
)

// assistantQuestions are n questions a reader could ask of pages, in
// form, made of words of the corpus, so that retrieval finds sections
// and the model is asked.
func assistantQuestions(pages []store.DocPage, n int, form string) []string {
	qs := make([]string, n)
	for i := range qs {
		p := pages[i*len(pages)/n]
		switch form {
		case titleQuestion:
			qs[i] = p.Title
		case sentenceQuestion:
			s := p.Sections[1]
			qs[i] = "How do I " + p.Title + " when " + s.Heading + " and " + strings.Join(strings.Fields(s.Text)[:2], " ") + "?"
		default:
			panic("unknown question form " + form)
		}
	}
	return qs
}

// modelReply is the benchmark's scripted answer: modelDeltas deltas, the
// first after modelFirstToken, then one every modelGap.
func modelReply() (llmtest.Reply, string) {
	deltas := make([]string, modelDeltas)
	for i := range deltas {
		deltas[i] = fmt.Sprintf("word%d ", i)
	}
	return llmtest.Reply{Deltas: deltas, FirstDelay: modelFirstToken, Gap: modelGap}, strings.Join(deltas, "")
}

// BenchmarkAssistantFirstByte asks the assistant questions over HTTP, one
// at a time, on a 5,000-page index, the model's first token coming after
// modelFirstToken: pages' titles through each provider, and sentences
// (sentenceQuestion), which retrieval answers by its fallback, through
// one. It reports, over the run's questions, the time from
// sending the request to the first text-delta event's arrival less the
// model's delay (added-p50-ms, added-p95-ms: what the server adds: key
// check, retrieval, the thread's records, the model's request), and the
// time between the first and the last delta at the client
// (spread-p50-ms) beside the model's own (model-spread-ms): equal when
// each delta is passed on as it comes; near zero if the server held the
// answer and sent it whole.
func BenchmarkAssistantFirstByte(b *testing.B) {
	pages := storetest.DocsCorpus(5000)
	st := indexedStore(b, pages)
	reply, want := modelReply()
	forms := map[llm.Provider][]string{
		llm.OpenAI:    {titleQuestion, sentenceQuestion},
		llm.Anthropic: {titleQuestion},
	}
	for _, provider := range []llm.Provider{llm.OpenAI, llm.Anthropic} {
		b.Run("provider="+string(provider), func(b *testing.B) {
			a := newAssistantServer(b, st, provider)
			for _, form := range forms[provider] {
				questions := assistantQuestions(pages, 200, form)
				b.Run("question="+form, func(b *testing.B) {
					var added, spread []time.Duration
					i := 0
					for b.Loop() {
						a.model.Script(reply)
						q := questions[i%len(questions)]
						ans, err := a.ask(b.Context(), q, nil)
						i++
						if err != nil {
							b.Fatal(err)
						}
						if ans.text != want || ans.sources == 0 {
							b.Fatalf("%q: answer %q with %d sources, want %q with sources", q, ans.text, ans.sources, want)
						}
						added = append(added, ans.firstDelta-modelFirstToken)
						spread = append(spread, ans.lastDelta-ans.firstDelta)
					}
					reportQuantile(b, added, 0.5, "added-p50-ms")
					reportQuantile(b, added, 0.95, "added-p95-ms")
					reportQuantile(b, spread, 0.5, "spread-p50-ms")
					b.ReportMetric(float64((modelDeltas-1)*modelGap)/1e6, "model-spread-ms")
				})
			}
		})
	}
}

// reportQuantile reports the q quantile of times, in milliseconds.
func reportQuantile(b *testing.B, times []time.Duration, q float64, unit string) {
	b.Helper()
	if len(times) == 0 {
		return
	}
	sorted := slices.Sorted(slices.Values(times))
	b.ReportMetric(float64(sorted[int(q*float64(len(sorted)-1))])/1e6, unit)
}

// TestAssistantStreamsEachDelta is the benchmark's check, run under
// -short too: for each provider, the answer's first delta reaches the
// client while the model still holds the rest back. A server that
// buffered the answer, or a part of it, would send nothing until the
// model went on, which it does only once the client saw the first delta:
// the test would then wait until its deadline and fail.
func TestAssistantStreamsEachDelta(t *testing.T) {
	pages := storetest.DocsCorpus(50)
	st := indexedStore(t, pages)
	question := assistantQuestions(pages, 1, titleQuestion)[0]
	for _, provider := range []llm.Provider{llm.OpenAI, llm.Anthropic} {
		t.Run("provider="+string(provider), func(t *testing.T) {
			a := newAssistantServer(t, st, provider)
			hold := make(chan struct{})
			a.model.Script(llmtest.Reply{Deltas: []string{"First ", "second ", "third."}, Hold: hold})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			ans, err := a.ask(ctx, question, func(i int) {
				if i == 0 {
					close(hold)
				}
			})
			if err != nil {
				t.Fatalf("%v (a first delta that does not come while the model holds the rest means the server buffers)", err)
			}
			if ans.text != "First second third." || ans.deltas != 3 || ans.sources == 0 || ans.threadID == "" {
				t.Errorf("answer %+v, want the three deltas, sources and a thread", ans)
			}
		})
	}
}
