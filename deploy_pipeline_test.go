package docsapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/jarcoal/httpmock"
)

// trigger is one call of the deployment and static export APIs that starts
// work, with the path it posts to and a 2xx answer.
type trigger struct {
	name, path, ok string
	call           func(ctx context.Context, c *Client, opts ...RequestOption) error
}

var triggers = []trigger{
	{"TriggerUpdate", "/v1/project/update/proj", `{"statusId":"s1"}`, func(ctx context.Context, c *Client, opts ...RequestOption) error {
		return errOf(c.Deployments.TriggerUpdate(ctx, "", opts...))
	}},
	{"TriggerPreview", "/v1/project/preview/proj", `{"statusId":"s1","previewUrl":"https://p.example.test"}`, func(ctx context.Context, c *Client, opts ...RequestOption) error {
		return errOf(c.Deployments.TriggerPreview(ctx, "", "main", opts...))
	}},
	{"TriggerAutomation", "/v1/workflow/proj/wf1/trigger", `{"schemaId":"wf1","instanceId":"i1","jobId":"j1"}`, func(ctx context.Context, c *Client, opts ...RequestOption) error {
		return errOf(c.Deployments.TriggerAutomation(ctx, "", "wf1", opts...))
	}},
	{"StaticExports.Start", "/v1/static-export/jobs", `{"jobId":"se1","status":"queued"}`, func(ctx context.Context, c *Client, opts ...RequestOption) error {
		return errOf(c.StaticExports.Start(ctx, StaticExportParams{Domain: "docs.example.com"}, opts...))
	}},
	{"StaticExports.Bundle", "/v1/static-export/jobs/se1/bundle", `{"jobId":"se1","bundleUrl":"https://b.example.test/x"}`, func(ctx context.Context, c *Client, opts ...RequestOption) error {
		return errOf(c.StaticExports.Bundle(ctx, "se1", opts...))
	}},
}

// A trigger whose outcome is unknown is never sent again: the server may
// have queued the deployment, the automation run or the export already.
func TestTriggersAreNotReplayedWhenTheOutcomeIsUnknown(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
	for _, tr := range triggers {
		for _, fail := range []struct {
			name  string
			reply httpmock.Responder
		}{
			{"500", replyJSON(http.StatusInternalServerError, `{"error":"Internal server error"}`)},
			{"503", replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`)},
			{"reset after sending", httpmock.NewErrorResponder(reset)},
			{"unexpected EOF", httpmock.NewErrorResponder(io.ErrUnexpectedEOF)},
		} {
			t.Run(tr.name+"/"+fail.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c, mt := newTestClient(t)
					log := serve(t, mt, on(http.MethodPost, tr.path, fail.reply, replyJSON(http.StatusAccepted, tr.ok)))
					var resp Response
					if err := tr.call(t.Context(), c, WithResponse(&resp)); err == nil {
						t.Fatal("the call succeeded, want the first attempt's error")
					}
					if n := len(log.Requests()); n != 1 || resp.Attempts != 1 {
						t.Errorf("%d requests (%d attempts), want 1", n, resp.Attempts)
					}
				})
			})
		}
	}
}

// A 429 was refused before any work, and an idempotency key makes a
// replay safe on a server that honours it: both are retried.
func TestTriggersAreRetriedWhenSafe(t *testing.T) {
	for _, tr := range triggers {
		t.Run(tr.name+"/429", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				log := serve(t, mt, on(http.MethodPost, tr.path,
					replyJSON(http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`), replyJSON(http.StatusAccepted, tr.ok)))
				if err := tr.call(t.Context(), c); err != nil {
					t.Fatal(err)
				}
				if n := len(log.Requests()); n != 2 {
					t.Errorf("%d requests, want 2", n)
				}
			})
		})
		t.Run(tr.name+"/idempotency key", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := newTestClient(t)
				log := serve(t, mt, on(http.MethodPost, tr.path,
					replyJSON(http.StatusServiceUnavailable, `{"error":"Service unavailable"}`), replyJSON(http.StatusAccepted, tr.ok)))
				if err := tr.call(t.Context(), c, WithIdempotencyKey("deploy-42")); err != nil {
					t.Fatal(err)
				}
				reqs := log.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests, want 2", len(reqs))
				}
				for _, r := range reqs {
					if k := r.Header.Get("Idempotency-Key"); k != "deploy-42" {
						t.Errorf("Idempotency-Key %q, want deploy-42 on every attempt", k)
					}
				}
			})
		})
	}
}

// Every call of these APIs needs an admin key: an assistant key is refused
// before anything is sent, with an error naming both kinds and not the key.
func TestDeploymentAndExportCallsRefuseAnAssistantKey(t *testing.T) {
	const key = "mint_dsc_SENTINEL7f3a9cKEYdoNotLeak"
	calls := map[string]func(ctx context.Context, c *Client) error{
		"UpdateStatus": func(ctx context.Context, c *Client) error { return errOf(c.Deployments.UpdateStatus(ctx, "s1")) },
		"WaitUpdate": func(ctx context.Context, c *Client) error {
			return errOf(c.Deployments.WaitUpdate(ctx, "s1", UpdateWaitParams{}))
		},
		"StaticExports.Get": func(ctx context.Context, c *Client) error { return errOf(c.StaticExports.Get(ctx, "se1")) },
		"StaticExports.Wait": func(ctx context.Context, c *Client) error {
			return errOf(c.StaticExports.Wait(ctx, "se1", StaticExportWaitParams{}))
		},
	}
	for _, tr := range triggers {
		calls[tr.name] = func(ctx context.Context, c *Client) error { return tr.call(ctx, c) }
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			// In a bubble: a waiter that wrongly polled on would sleep.
			synctest.Test(t, func(t *testing.T) {
				mt := httpmock.NewMockTransport()
				c, err := NewClient(key, WithHTTPClient(&http.Client{Transport: mt}), WithBaseURL(testBaseURL), WithProjectID("proj"))
				if err != nil {
					t.Fatal(err)
				}
				err = call(t.Context(), c)
				var v *ValidationError
				if !errors.As(err, &v) || v.Param != "apiKey" {
					t.Fatalf("err = %v, want a *ValidationError on apiKey", err)
				}
				msg := err.Error()
				if !strings.Contains(msg, "an assistant key (mint_dsc_...)") || !strings.Contains(msg, "needs an admin API key (mint_...)") {
					t.Errorf("the error %q does not name both kinds", msg)
				}
				if strings.Contains(msg, "SENTINEL") {
					t.Errorf("the error holds the key: %q", msg)
				}
				if n := mt.GetTotalCallCount(); n != 0 {
					t.Errorf("%d requests were sent", n)
				}
			})
		})
	}
}
