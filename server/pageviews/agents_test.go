package pageviews

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/traffic"
)

// agentsOf returns the flushed agents of every count of sink, by name and
// class, summed over paths and hours.
func agentsOf(sink *memSink) map[traffic.Agent]int64 {
	out := map[traffic.Agent]int64{}
	for _, c := range sink.snapshot() {
		for _, a := range c.Agents {
			class, err := traffic.ParseClass(string(a.Class))
			if err != nil {
				panic(err)
			}
			out[traffic.Agent{Name: a.Name, Class: class}] += a.Views
		}
	}
	return out
}

// AI and bot views are counted per agent, by the classifier's names, through
// the middleware and RecordAgent; a name the classifier does not give is
// counted as traffic.OtherAgent; humans are never named.
func TestRecorderCountsAgentsByName(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink)
	mw, err := r.Middleware(MiddlewareConfig{Project: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(site())
	for _, ua := range []string{agentUA, agentUA, botUA, chromeUA, "GPTBot/1.2", "Mozilla/5.0 (compatible; GPTBot/1.2)"} {
		req := httptest.NewRequest("GET", "/guide", nil)
		req.Header.Set("User-Agent", ua)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	r.RecordAgent("docs", "/guide", traffic.AI, "Claude-User", at, 3)
	r.RecordAgent("docs", "/guide", traffic.AI, "GPTBot", at, 1)                    // GPTBot is a training crawler, not AI
	r.RecordAgent("docs", "/guide", traffic.OtherBot, "Mozilla/5.0 made-up", at, 2) // a user agent is no name
	r.RecordAgent("docs", "/guide", traffic.Human, "Chrome", at, 5)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[traffic.Agent]int64{
		{Name: "ChatGPT-User", Class: traffic.AI}:           2,
		{Name: "Googlebot", Class: traffic.SearchBot}:       1,
		{Name: "GPTBot", Class: traffic.TrainingBot}:        2,
		{Name: "Claude-User", Class: traffic.AI}:            3,
		{Name: traffic.OtherAgent, Class: traffic.AI}:       1,
		{Name: traffic.OtherAgent, Class: traffic.OtherBot}: 2,
	}
	if d := gocmp.Diff(want, agentsOf(sink)); d != "" {
		t.Errorf("agents flushed (-want +got):\n%s", d)
	}
	c := sink.snapshot()["docs /guide "+at.Truncate(time.Hour).Format(time.RFC3339)]
	if c.Human != 6 || c.AI != 6 || c.Bot != 5 {
		t.Errorf("views = %+v, want 6 human, 6 AI, 5 bot", c)
	}
}

// Agents' views survive a failed flush, and past MaxKeys they are counted
// on the overflow counter with their views: per agent, totals stay exact.
func TestAgentsSurviveFailedFlushesAndOverflow(t *testing.T) {
	sink := &memSink{fail: 1}
	r := newRecorder(t, sink, func(c *Config) { c.MaxKeys = 2 })
	for i := range 5 {
		r.RecordAgent("docs", fmt.Sprintf("/p%d", i), traffic.TrainingBot, "GPTBot", at, 1)
	}
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("the first flush did not fail")
	}
	r.RecordAgent("docs", "/p0", traffic.TrainingBot, "GPTBot", at, 10)
	r.RecordAgent("docs", "/p0", traffic.AI, "Cursor", at, 1)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[traffic.Agent]int64{
		{Name: "GPTBot", Class: traffic.TrainingBot}: 15,
		{Name: "Cursor", Class: traffic.AI}:          1,
	}
	if d := gocmp.Diff(want, agentsOf(sink)); d != "" {
		t.Errorf("agents flushed (-want +got):\n%s", d)
	}
	if c := sink.snapshot()["docs "+DefaultOverflowPath+" "+at.Truncate(time.Hour).Format(time.RFC3339)]; len(c.Agents) != 1 || c.Agents[0].Views != 3 {
		t.Errorf("the overflow counter's agents are %+v, want GPTBot's 3 views", c.Agents)
	}
}

// A flood of 100,000 distinct made-up user agents through the middleware
// stores no more agent names than the classifier's table has: names come
// from the table, never from the user agents.
func TestAgentNamesStayBoundedUnderAFlood(t *testing.T) {
	sink := &memSink{}
	r := newRecorder(t, sink)
	mw, err := r.Middleware(MiddlewareConfig{Project: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(site())
	known := map[traffic.Agent]bool{}
	for _, a := range traffic.Default().Agents() {
		known[a] = true
	}
	tokens := []string{"GPTBot", "ClaudeBot", "Claude-User", "curl", "python-requests", "bot", "Spider"}
	w := httptest.NewRecorder()
	for i := range 100_000 {
		ua := fmt.Sprintf("Mozilla/5.0 (compatible; %s-x%d/%d.0; +https://example.com/%d) %s/%d", tokens[i%len(tokens)], i, i, i, tokens[(i/7)%len(tokens)], i)
		if i%3 == 0 {
			ua = strings.Repeat("z", i%50) + fmt.Sprintf(" agent-%d", i)
		}
		req := httptest.NewRequest("GET", fmt.Sprintf("/page/%d", i%40), nil)
		req.Header.Set("User-Agent", ua)
		h.ServeHTTP(w, req)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := agentsOf(sink)
	for a := range got {
		if !known[a] {
			t.Errorf("stored agent %+v is not a name of the classifier's table", a)
		}
	}
	if len(got) > len(known) || len(got) == 0 {
		t.Errorf("%d agent names stored; the table has %d", len(got), len(known))
	}
	for _, c := range sink.snapshot() {
		if len(c.Agents) > len(known) {
			t.Errorf("%s holds %d agents", c.Path, len(c.Agents))
		}
	}
	var sum int64
	for _, n := range got {
		sum += n
	}
	var bots, ais int64
	for _, c := range sink.snapshot() {
		bots += c.Bot
		ais += c.AI
	}
	if sum != bots+ais {
		t.Errorf("agents hold %d views; AI and bots have %d", sum, bots+ais)
	}
}
