package ingest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// A body's views are counted per agent by the classifier's names, merged
// by path and hour; humans get none.
func TestParseIngestNamesAgents(t *testing.T) {
	now := time.Date(2026, 8, 14, 9, 30, 0, 0, time.UTC)
	body := `{"views":[
		{"path":"/guide","userAgent":"GPTBot/1.2","count":2},
		{"path":"/guide/","userAgent":"Mozilla/5.0 (compatible; GPTBot/1.2)"},
		{"path":"/guide","userAgent":"ChatGPT-User/1.0"},
		{"path":"/guide.md","userAgent":"curl/8.0"},
		{"path":"/guide","userAgent":"Mozilla/5.0 (Windows NT 10.0) Chrome/131.0"}]}`
	counts, _, details := parseIngest([]byte(body), now, traffic.Default())
	if len(details) > 0 {
		t.Fatal(details)
	}
	want := []store.ViewCount{{Path: "/guide", Hour: now.Truncate(time.Hour), Human: 1, AI: 2, Bot: 3, Agents: []store.AgentCount{
		{Name: "GPTBot", Class: store.AgentTrainingBot, Views: 3},
		{Name: "ChatGPT-User", Class: store.AgentAI, Views: 1},
		{Name: "Markdown (.md URL)", Class: store.AgentAI, Views: 1},
	}}}
	if d := cmp.Diff(want, counts); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
}

// mergeCounts adds up the agents of the same key across a group's
// requests, leaving each request's own counts as they were.
func TestMergeCountsAddsAgents(t *testing.T) {
	hour := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	a := []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, AI: 1, Bot: 2, Agents: []store.AgentCount{
		{Name: "Cursor", Class: store.AgentAI, Views: 1}, {Name: "GPTBot", Class: store.AgentTrainingBot, Views: 2}}}}
	b := []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, Bot: 5, Agents: []store.AgentCount{
		{Name: "GPTBot", Class: store.AgentTrainingBot, Views: 4}, {Name: "curl", Class: store.AgentOtherBot, Views: 1}}}}
	got := mergeCounts([]*viewsBatch{{counts: a}, {counts: b}})
	want := []store.ViewCount{{ProjectID: "p", Path: "/a", Hour: hour, AI: 1, Bot: 7, Agents: []store.AgentCount{
		{Name: "Cursor", Class: store.AgentAI, Views: 1}, {Name: "GPTBot", Class: store.AgentTrainingBot, Views: 6}, {Name: "curl", Class: store.AgentOtherBot, Views: 1}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
	if a[0].Agents[1].Views != 2 || len(a[0].Agents) != 2 {
		t.Errorf("merging changed the first request's own counts: %+v", a[0].Agents)
	}
}
