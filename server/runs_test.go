package server_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// A job, or a follow-up, for a project that Config.Runs says cannot run
// here is refused with a 503 that says why, and nothing is stored; other
// projects are served as usual.
func TestJobsOfAProjectThatCannotRunAreRefused(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.Runs = func(_ context.Context, p store.Project) error {
			if p.ID == "beta" {
				return errors.New("no runner for it")
			}
			return nil
		}
	})
	resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt": "fix the typo"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("alpha: %d %s", resp.StatusCode, body)
	}
	job := servertest.JobOf(t, body)["id"].(string)
	for _, target := range []string{"/v2/agent/beta/job", "/v2/agent/beta/job/" + job + "/message"} {
		resp, body := e.Do("beta", "POST", target, `{"prompt": "fix the typo"}`)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s: %d %s, want 503", target, resp.StatusCode, body)
		}
		if got, want := servertest.ErrorOf(t, body), `this server cannot run jobs of project "beta": no runner for it`; got != want {
			t.Errorf("%s: error %q, want %q", target, got, want)
		}
	}
	page, err := e.Store.ListJobs(context.Background(), store.JobsQuery{JobFilter: store.JobFilter{ProjectID: "beta"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Jobs) != 0 {
		t.Errorf("the refused job was stored: %+v", page.Jobs)
	}
}
