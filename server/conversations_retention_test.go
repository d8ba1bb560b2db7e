package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
)

// threadStatus is the status the thread export answers for id.
func (e *env) threadStatus(id string) int {
	e.T.Helper()
	resp, _ := e.Do("ro", "GET", "/v1/analytics/alpha/assistant/threads/"+id, "")
	return resp.StatusCode
}

// A sweep deletes what was asked longer than the retention ago, on the
// server's clock, and nothing else; a thread goes with its last exchange.
func TestSweepConversationsKeepsTheRetention(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.AssistantRetention = 48 * time.Hour })
	ctx := context.Background()
	now := e.Clock.Now()
	old := e.Ask(servertest.Ask{Question: "old", Answer: "a", At: now.Add(-72 * time.Hour)})
	follow := e.Ask(servertest.Ask{Thread: old.ThreadID, Question: "old, followed up", Answer: "a", At: now.Add(-47 * time.Hour)})
	e.Ask(servertest.Ask{Question: "recent", Answer: "a", At: now.Add(-time.Hour)})
	beta := e.Ask(servertest.Ask{Project: "beta", Question: "beta's old", Answer: "a", At: now.Add(-49 * time.Hour)})

	n, err := e.Server.SweepConversations(ctx)
	if err != nil || n != 2 {
		t.Fatalf("the first sweep deleted %d, %v; want 2 (alpha's and beta's past 48h)", n, err)
	}
	got, _ := e.allConversations("", 10)
	if want := []string{"old, followed up", "recent"}; !equal(got, want) {
		t.Errorf("after the sweep: %v, want %v", got, want)
	}
	var thread struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	e.GetJSON("ro", "/v1/analytics/alpha/assistant/threads/"+old.ThreadID, &thread)
	if len(thread.Messages) != 2 || thread.Messages[0].ID != follow.QuestionID {
		t.Errorf("the thread with an exchange left holds %v, want the follow-up's two messages", thread.Messages)
	}
	if n, err := e.Server.SweepConversations(ctx); err != nil || n != 0 {
		t.Errorf("sweeping again deleted %d, %v", n, err)
	}
	if resp, _ := e.Do("beta", "GET", "/v1/analytics/beta/assistant/threads/"+beta.ThreadID, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("beta's thread past the retention: %d, want 404", resp.StatusCode)
	}

	// A day later, the follow-up is past it too, and its thread goes.
	e.Clock.Advance(24 * time.Hour)
	if n, err := e.Server.SweepConversations(ctx); err != nil || n != 1 {
		t.Fatalf("a day later the sweep deleted %d, %v; want 1", n, err)
	}
	if st := e.threadStatus(old.ThreadID); st != http.StatusNotFound {
		t.Errorf("the thread of deleted exchanges: %d, want 404", st)
	}
	if got, _ := e.allConversations("", 10); !equal(got, []string{"recent"}) {
		t.Errorf("after the second sweep: %v", got)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The default keeps 90 days; a negative retention keeps everything.
func TestSweepConversationsDefaultAndForever(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	now := e.Clock.Now()
	e.Ask(servertest.Ask{Question: "91 days", Answer: "a", At: now.Add(-91 * 24 * time.Hour)})
	e.Ask(servertest.Ask{Question: "89 days", Answer: "a", At: now.Add(-89 * 24 * time.Hour)})
	if n, err := e.Server.SweepConversations(ctx); err != nil || n != 1 {
		t.Fatalf("the default retention deleted %d, %v; want 1", n, err)
	}
	if got, _ := e.allConversations("", 10); !equal(got, []string{"89 days"}) {
		t.Errorf("after the default sweep: %v", got)
	}

	forever := newEnv(t, func(c *server.Config) { c.AssistantRetention = -1 })
	forever.Ask(servertest.Ask{Question: "ten years", Answer: "a", At: now.AddDate(-10, 0, 0)})
	if n, err := forever.Server.SweepConversations(ctx); err != nil || n != 0 {
		t.Fatalf("keeping forever, the sweep deleted %d, %v", n, err)
	}
	if got, _ := forever.allConversations("", 10); !equal(got, []string{"ten years"}) {
		t.Errorf("keeping forever: %v", got)
	}
}

// RunConversationSweeps sweeps at once and on its interval, until its
// context ends.
func TestRunConversationSweeps(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.AssistantRetention = time.Hour })
	now := e.Clock.Now()
	e.Ask(servertest.Ask{Question: "two hours ago", Answer: "a", At: now.Add(-2 * time.Hour)})
	e.Ask(servertest.Ask{Question: "now", Answer: "a"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Server.RunConversationSweeps(ctx, time.Millisecond) }()
	waitFor := func(what string, want []string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got, _ := e.allConversations("", 10)
			if equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the export still holds %v, want %v", what, got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("the first sweep", []string{"now"})
	e.Clock.Advance(2 * time.Hour)
	waitFor("a later sweep", nil)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("RunConversationSweeps did not return within 30s of its context ending")
	}
}
