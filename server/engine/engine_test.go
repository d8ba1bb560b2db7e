package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server/store"
)

func TestCompletesWithPullRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, succeed)
		cfg := w.config("engine-a")
		cfg.PollInterval = time.Hour // the job can only be found through JobQueued in this test's minute
		e := w.start(cfg)
		synctest.Wait()

		const prompt = "Document the v2 API\n\nCover authentication too."
		w.createJob(w.store, "job-1", prompt)
		e.JobQueued()
		j := w.waitDone("job-1", time.Minute)

		url := w.prs.url(branchOf("job-1"))
		if url == "" {
			t.Fatalf("no pull request was opened for %s", branchOf("job-1"))
		}
		if j.Status != store.JobStatusCompleted || j.PRLink != url || j.Handled != 1 || j.Attempts != 1 ||
			j.LeaseOwner != "" || !j.LeaseExpiresAt.IsZero() || j.FailureReason != "" {
			t.Errorf("job = status %q, PRLink %q, Handled %d, Attempts %d, lease %q until %v, reason %q; want completed, %q, 1, 1, no lease, no reason",
				j.Status, j.PRLink, j.Handled, j.Attempts, j.LeaseOwner, j.LeaseExpiresAt, j.FailureReason, url)
		}

		calls := w.agent.calls()
		if len(calls) != 1 {
			t.Fatalf("the agent ran %d times, want 1", len(calls))
		}
		wantTask := Task{JobID: "job-1", ProjectID: testProject, Dir: "workspace-1", Prompts: []string{prompt}, Model: testModel}
		if diff := cmp.Diff(wantTask, calls[0].Task); diff != "" {
			t.Errorf("agent task (-want +got):\n%s", diff)
		}

		specs, messages, closed := w.repos.snapshot()
		if diff := cmp.Diff([]RepoSpec{{Repository: testRepo, Ref: testRef, Branch: branchOf("job-1")}}, specs); diff != "" {
			t.Errorf("workspaces opened (-want +got):\n%s", diff)
		}
		if len(messages) != 1 || !strings.HasPrefix(messages[0], "Document the v2 API\n\n") || !strings.Contains(messages[0], "Agent job: job-1") {
			t.Errorf("Publish messages = %q, want one whose subject is the prompt's first line and that names job-1", messages)
		}
		if closed != 1 {
			t.Errorf("workspaces closed = %d, want 1", closed)
		}

		opened, prSpecs, _ := w.prs.snapshot()
		if opened != 1 || len(prSpecs) != 1 {
			t.Fatalf("pull requests opened = %d, Ensure calls = %d; want 1 and 1", opened, len(prSpecs))
		}
		got := prSpecs[0]
		if got.Repository != testRepo || got.Base != testRef || got.Branch != branchOf("job-1") || got.Title != "Docs: Document the v2 API" ||
			!strings.Contains(got.Body, "> Document the v2 API") || !strings.Contains(got.Body, "job-1") {
			t.Errorf("Ensure got %+v; want base %q, branch %q, the prompt's title, a body quoting the prompt and naming the job", got, testRef, branchOf("job-1"))
		}

		rec := w.store.record()
		want := []store.Finish{{JobID: "job-1", Owner: "engine-a", Outcome: store.Completed, PRLink: url, Handled: 1}}
		if diff := cmp.Diff(want, rec.finishes, cmpIgnoreAt); diff != "" {
			t.Errorf("FinishJob calls (-want +got):\n%s", diff)
		}
	})
}

var cmpIgnoreAt = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".At" }, cmp.Ignore())

func TestCompletesWithoutChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, succeed)
		w.repos.changed = false
		e := w.start(w.config("engine-a"))
		w.createJob(w.store, "job-1", "Check the links")
		e.JobQueued()
		j := w.waitDone("job-1", time.Minute)

		if j.Status != store.JobStatusCompleted || j.PRLink != "" || j.Handled != 1 || j.FailureReason != "" {
			t.Errorf("job = status %q, PRLink %q, Handled %d, reason %q; want completed with no PRLink, Handled 1",
				j.Status, j.PRLink, j.Handled, j.FailureReason)
		}
		if opened, specs, _ := w.prs.snapshot(); opened != 0 || len(specs) != 0 {
			t.Errorf("pull requests opened = %d, Ensure calls = %d; want none: nothing changed", opened, len(specs))
		}
		if _, messages, closed := w.repos.snapshot(); len(messages) != 1 || closed != 1 {
			t.Errorf("Publish calls = %d, workspaces closed = %d; want 1 and 1", len(messages), closed)
		}
	})
}

// TestPartsPerProject shows that a job runs with the parts of its own
// project, as Config.Parts chose them.
func TestPartsPerProject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, succeed)
		other := newAgent(succeed)
		if err := w.store.CreateProject(t.Context(), store.Project{ID: "p2", Repository: "https://git.example/acme/other.git", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		cfg := w.config("engine-a")
		cfg.Parts = func(ctx context.Context, p store.Project) (Parts, error) {
			if p.ID == "p2" {
				return Parts{Repositories: w.repos, Agent: other, PullRequests: w.prs}, nil
			}
			return w.parts(ctx, p)
		}
		e := w.start(cfg)
		w.createJob(w.store, "job-1", "For the first project")
		if _, _, err := w.store.CreateJob(t.Context(), store.NewJob{ID: "job-2", ProjectID: "p2", Prompt: "For the second", Branch: branchOf("job-2"), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		e.JobQueued()
		w.waitDone("job-1", time.Minute)
		waitFor(t, "job-2 to complete", time.Minute, func() bool {
			j, err := w.store.Job(t.Context(), "p2", "job-2")
			return err == nil && j.Status == store.JobStatusCompleted
		})
		if c := w.agent.calls(); len(c) != 1 || c[0].Task.JobID != "job-1" {
			t.Errorf("the first project's agent ran %v, want job-1 only", jobIDs(c))
		}
		if c := other.calls(); len(c) != 1 || c[0].Task.JobID != "job-2" || c[0].Task.ProjectID != "p2" {
			t.Errorf("the second project's agent ran %v, want job-2 only", jobIDs(c))
		}
	})
}

func jobIDs(calls []agentCall) []string {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.Task.JobID
	}
	return ids
}

func TestAgentFailures(t *testing.T) {
	t.Run("a permanent error fails the job at once with its reason", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, func(context.Context, int, Task) error {
				return Permanent(errors.New("the model refused: the prompt asks for secrets"))
			})
			e := w.start(w.config("engine-a"))
			w.createJob(w.store, "job-1", "Publish the API keys")
			e.JobQueued()
			j := w.waitDone("job-1", time.Minute)

			// Long enough for any retry to have happened.
			time.Sleep(10 * w.config("").RetryDelay)
			synctest.Wait()
			j2 := w.job("job-1")
			if j2.Status != store.JobStatusFailed || !strings.Contains(j.FailureReason, "the model refused: the prompt asks for secrets") || j2.Attempts != 1 {
				t.Errorf("job = status %q, reason %q, Attempts %d; want failed with the agent's message, after 1 attempt", j2.Status, j2.FailureReason, j2.Attempts)
			}
			if n := len(w.agent.calls()); n != 1 {
				t.Errorf("the agent ran %d times, want 1: a permanent error is not retried", n)
			}
			if _, messages, closed := w.repos.snapshot(); len(messages) != 0 || closed != 1 {
				t.Errorf("Publish calls = %d, workspaces closed = %d; want 0 and 1", len(messages), closed)
			}
			if opened, specs, _ := w.prs.snapshot(); opened != 0 || len(specs) != 0 {
				t.Errorf("pull requests opened = %d, Ensure calls = %d; want none", opened, len(specs))
			}
		})
	})

	t.Run("a transient error is retried after RetryDelay, up to MaxAttempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, func(context.Context, int, Task) error { return errTransient })
			cfg := w.config("engine-a")
			e := w.start(cfg)
			w.createJob(w.store, "job-1", "Update the changelog")
			e.JobQueued()

			waitFor(t, "the first attempt to end", time.Minute, func() bool { return w.agent.ended(1) })
			if j := w.job("job-1"); j.Status != store.JobStatusActive || j.FailureReason != "" || j.Attempts != 1 {
				t.Errorf("after a transient failure: status %q, reason %q, Attempts %d; want active, no reason, 1", j.Status, j.FailureReason, j.Attempts)
			}

			j := w.waitDone("job-1", 10*cfg.RetryDelay)
			want := "gave up after 3 attempts: the agent failed: " + errTransient.Error()
			if j.Status != store.JobStatusFailed || j.FailureReason != want || j.Attempts != 3 {
				t.Errorf("job = status %q, reason %q, Attempts %d; want failed, %q, 3", j.Status, j.FailureReason, j.Attempts, want)
			}
			calls := w.agent.calls()
			if len(calls) != 3 {
				t.Fatalf("the agent ran %d times, want 3", len(calls))
			}
			for i := 1; i < len(calls); i++ {
				if gap := calls[i].Start.Sub(calls[i-1].End); gap < cfg.RetryDelay {
					t.Errorf("attempt %d started %v after attempt %d failed, before RetryDelay %v", i+1, gap, i, cfg.RetryDelay)
				}
			}
			if rec := w.store.record(); len(rec.finished) != 1 || rec.finished[0].Status != store.JobStatusFailed {
				t.Errorf("FinishJob stored %d outcomes, want one failure", len(rec.finished))
			}
		})
	})

	// A transient failure at any step is retried, and the retry meets the
	// pull request an earlier attempt may have opened.
	for _, tc := range []struct {
		name  string
		setup func(w *world)
	}{
		{"agent", func(w *world) { w.agent.script = failFirst(1, errTransient) }},
		{"publish", func(w *world) {
			w.repos.publishErr = func(call int) error {
				if call == 1 {
					return errTransient
				}
				return nil
			}
		}},
		{"pull request opened but its answer lost", func(w *world) {
			w.prs.failErr = func(call int) error {
				if call == 1 {
					return errTransient
				}
				return nil
			}
		}},
	} {
		t.Run("transient failure then success: "+tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, succeed)
				tc.setup(w)
				cfg := w.config("engine-a")
				e := w.start(cfg)
				w.createJob(w.store, "job-1", "Fix the quickstart")
				e.JobQueued()
				j := w.waitDone("job-1", 10*cfg.RetryDelay)

				opened, _, urls := w.prs.snapshot()
				if j.Status != store.JobStatusCompleted || j.Attempts != 2 || j.PRLink == "" || j.PRLink != urls[branchOf("job-1")] {
					t.Errorf("job = status %q, Attempts %d, PRLink %q; want completed after 2 attempts with the pull request %q",
						j.Status, j.Attempts, j.PRLink, urls[branchOf("job-1")])
				}
				if opened != 1 {
					t.Errorf("pull requests opened = %d, want 1", opened)
				}
				if n := len(w.agent.calls()); n != 2 {
					t.Errorf("the agent ran %d times, want 2", n)
				}
				if _, _, closed := w.repos.snapshot(); closed != 2 {
					t.Errorf("workspaces closed = %d, want 2", closed)
				}
			})
		})
	}
}

func TestFollowUps(t *testing.T) {
	t.Run("after completion: same pull request, both prompts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, succeed)
			e := w.start(w.config("engine-a"))
			w.createJob(w.store, "job-1", "Document the v2 API")
			e.JobQueued()
			first := w.waitDone("job-1", time.Minute)
			if first.Status != store.JobStatusCompleted || first.PRLink == "" {
				t.Fatalf("first run: status %q, PRLink %q; want completed with a pull request", first.Status, first.PRLink)
			}

			w.addPrompt("job-1", "Also document pagination.")
			e.JobQueued()
			j := w.waitDone("job-1", time.Minute)

			if j.Status != store.JobStatusCompleted || j.Handled != 2 || j.PRLink != first.PRLink || j.Attempts != 1 {
				t.Errorf("after the follow-up: status %q, Handled %d, PRLink %q, Attempts %d; want completed, 2, %q, 1",
					j.Status, j.Handled, j.PRLink, j.Attempts, first.PRLink)
			}
			calls := w.agent.calls()
			if len(calls) != 2 {
				t.Fatalf("the agent ran %d times, want 2", len(calls))
			}
			if diff := cmp.Diff([]string{"Document the v2 API", "Also document pagination."}, calls[1].Task.Prompts); diff != "" {
				t.Errorf("second run's prompts (-want +got):\n%s", diff)
			}
			opened, specs, _ := w.prs.snapshot()
			if opened != 1 || len(specs) != 2 {
				t.Errorf("pull requests opened = %d, Ensure calls = %d; want 1 and 2", opened, len(specs))
			} else if specs[1].Branch != branchOf("job-1") || !strings.Contains(specs[1].Body, "**Follow-up 1**\n\n> Also document pagination.") {
				t.Errorf("second Ensure = %+v; want the job's branch and a body with the follow-up", specs[1])
			}
			if repoSpecs, messages, _ := w.repos.snapshot(); len(messages) != 2 || !strings.HasPrefix(messages[1], "Also document pagination.\n") ||
				repoSpecs[1].Branch != branchOf("job-1") {
				t.Errorf("second run: workspace %+v, commit messages %q; want the job's branch, committed under the follow-up", repoSpecs, messages)
			}
		})
	})

	t.Run("during a run: the job runs again", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			proceed := make(chan struct{})
			w := newWorld(t, func(ctx context.Context, call int, _ Task) error {
				if call == 1 {
					select {
					case <-proceed:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				return nil
			})
			e := w.start(w.config("engine-a"))
			w.createJob(w.store, "job-1", "Document the v2 API")
			e.JobQueued()
			waitFor(t, "the first run to start", time.Minute, func() bool { return w.agent.started(1) })
			w.addPrompt("job-1", "Also document pagination.")
			close(proceed)
			j := w.waitDone("job-1", time.Minute)

			if j.Status != store.JobStatusCompleted || j.Handled != 2 || j.PRLink == "" {
				t.Errorf("job = status %q, Handled %d, PRLink %q; want completed, 2, a pull request", j.Status, j.Handled, j.PRLink)
			}
			calls := w.agent.calls()
			if len(calls) != 2 {
				t.Fatalf("the agent ran %d times, want 2", len(calls))
			}
			if diff := cmp.Diff([][]string{{"Document the v2 API"}, {"Document the v2 API", "Also document pagination."}},
				[][]string{calls[0].Task.Prompts, calls[1].Task.Prompts}); diff != "" {
				t.Errorf("prompts of the runs (-want +got):\n%s", diff)
			}
			rec := w.store.record()
			if len(rec.finished) != 2 ||
				rec.finished[0].Status != store.JobStatusActive || rec.finished[0].Handled != 1 ||
				rec.finished[1].Status != store.JobStatusCompleted || rec.finished[1].Handled != 2 {
				t.Errorf("outcomes stored: %v; want active with 1 handled, then completed with 2", summarize(rec.finished))
			}
			if opened, _, _ := w.prs.snapshot(); opened != 1 {
				t.Errorf("pull requests opened = %d, want 1", opened)
			}
		})
	})

	// A job whose follow-ups keep arriving while it runs must not run out of
	// attempts: each of its runs ended with an outcome.
	t.Run("many follow-ups during runs", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const followUps = 3
			proceed := make(chan struct{})
			w := newWorld(t, func(ctx context.Context, call int, _ Task) error {
				if call <= followUps {
					select {
					case proceed <- struct{}{}:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				return nil
			})
			cfg := w.config("engine-a")
			cfg.MaxAttempts = 2
			e := w.start(cfg)
			w.createJob(w.store, "job-1", "prompt 0")
			e.JobQueued()
			for i := 1; i <= followUps; i++ {
				// Each run waits for its follow-up before it ends.
				waitFor(t, "a run to start or the job to end", time.Minute, func() bool {
					return w.agent.started(i) || w.job("job-1").Status != store.JobStatusActive
				})
				if !w.agent.started(i) {
					break
				}
				w.addPrompt("job-1", fmt.Sprintf("follow-up %d", i))
				<-proceed
			}
			j := w.waitDone("job-1", time.Minute)
			if j.Status != store.JobStatusCompleted || j.Handled != followUps+1 {
				t.Errorf("after %d follow-ups that each arrived during a run, job = status %q, reason %q, Attempts %d; want completed with %d prompts handled",
					followUps, j.Status, j.FailureReason, j.Attempts, followUps+1)
			}
		})
	})
}

func summarize(jobs []store.Job) []string {
	var s []string
	for _, j := range jobs {
		s = append(s, fmt.Sprintf("%s, handled %d", j.Status, j.Handled))
	}
	return s
}

func TestPartsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, succeed)
		cfg := w.config("engine-a")
		var calls atomic.Int32
		cfg.Parts = func(context.Context, store.Project) (Parts, error) {
			calls.Add(1)
			return Parts{}, errors.New("no agent is configured for model test-model")
		}
		e := w.start(cfg)
		w.createJob(w.store, "job-1", "Document the v2 API")
		e.JobQueued()
		j := w.waitDone("job-1", time.Minute)
		time.Sleep(10 * cfg.RetryDelay)
		synctest.Wait()

		if j.Status != store.JobStatusFailed || !strings.Contains(j.FailureReason, "no agent is configured for model test-model") || j.Attempts != 1 {
			t.Errorf("job = status %q, reason %q, Attempts %d; want failed at once with the Parts error", j.Status, j.FailureReason, j.Attempts)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("Parts was called %d times, want 1: a configuration error is not retried", n)
		}
	})
}

// TestIncompleteParts: a Parts function that returns a nil part without an
// error is a configuration mistake of the host, and must fail the job with a
// reason rather than crash the process (and, after the lease expires, every
// other replica that claims the job).
func TestIncompleteParts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, succeed)
		cfg := w.config("engine-a")
		cfg.Parts = func(context.Context, store.Project) (Parts, error) {
			return Parts{Repositories: w.repos, PullRequests: w.prs}, nil // no Agent
		}
		e := w.start(cfg)
		w.createJob(w.store, "job-1", "Document the v2 API")
		e.JobQueued()
		j := w.waitDone("job-1", time.Minute)
		if j.Status != store.JobStatusFailed || !strings.Contains(j.FailureReason, "Agent") {
			t.Errorf("job = status %q, reason %q; want failed with a reason naming the missing part", j.Status, j.FailureReason)
		}
	})
}
