package server_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

func TestCreateGetAndMessageAJob(t *testing.T) {
	e := newEnv(t)
	resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"Document the --verbose flag"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	job := servertest.JobOf(t, body)
	id, _ := job["id"].(string)
	want := map[string]any{
		"id":         id,
		"status":     "active",
		"source":     map[string]any{"repository": "https://git.example.com/alpha/docs.git", "ref": "docs-agent/" + id},
		"model":      "claude-sonnet-4",
		"prLink":     nil,
		"createdAt":  "2026-08-14T09:00:00Z",
		"archivedAt": nil,
	}
	if diff := cmp.Diff(want, job); id == "" || diff != "" {
		t.Fatalf("created job (-want +got):\n%s", diff)
	}

	resp, body = e.Do("ro", "GET", "/v2/agent/alpha/job/"+id, "")
	if resp.StatusCode != http.StatusOK || !cmp.Equal(want, servertest.JobOf(t, body)) {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}

	resp, body = e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", `{"prompt":"Also add an example"}`)
	if resp.StatusCode != http.StatusOK || servertest.JobOf(t, body)["id"] != id {
		t.Fatalf("message: %d %s", resp.StatusCode, body)
	}
	stored, err := e.Store.Job(context.Background(), "alpha", id)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, p := range stored.Prompts {
		prompts = append(prompts, p.Text)
	}
	if diff := cmp.Diff([]string{"Document the --verbose flag", "Also add an example"}, prompts); diff != "" {
		t.Errorf("prompt history (-want +got):\n%s", diff)
	}
}

// source.ref is the branch the agent works on, as the hosted service's
// reference describes it, whether or not the project names the ref its
// branch starts from; that one stays with the operator.
func TestJobSourceRefIsTheWorkingBranch(t *testing.T) {
	e := newEnv(t)
	// alpha starts from main, beta from the repository's default branch.
	for project, key := range map[string]string{"alpha": "rw", "beta": "beta"} {
		_, body := e.Do(key, "POST", "/v2/agent/"+project+"/job", `{"prompt":"x"}`)
		job := servertest.JobOf(t, body)
		id, _ := job["id"].(string)
		src, _ := job["source"].(map[string]any)
		if id == "" || src["ref"] != "docs-agent/"+id {
			t.Fatalf("%s: source = %v, want ref docs-agent/%s", project, src, id)
		}
		stored, err := e.Server.Job(context.Background(), project, id)
		if err != nil || stored.Branch != "docs-agent/"+id {
			t.Fatalf("%s: stored job %+v, %v", project, stored, err)
		}
		if want := map[string]string{"alpha": "main", "beta": ""}[project]; stored.Ref != want {
			t.Errorf("%s: the operator sees the base ref %q, want %q", project, stored.Ref, want)
		}
	}
}

// Every job names its model: the project's, or, for a project that names
// none (beta), server.UnnamedModel, which the job does not keep (the agent
// still picks its own model).
func TestJobModelIsNeverEmpty(t *testing.T) {
	e := newEnv(t)
	_, body := e.Do("beta", "POST", "/v2/agent/beta/job", `{"prompt":"x"}`)
	job := servertest.JobOf(t, body)
	if job["model"] != server.UnnamedModel || server.UnnamedModel != "docsapi-agent" {
		t.Fatalf("model = %v, want %q", job["model"], "docsapi-agent")
	}
	id, _ := job["id"].(string)
	_, body = e.Do("beta", "GET", "/v2/agent/beta/job/"+id, "")
	if got := servertest.JobOf(t, body)["model"]; got != server.UnnamedModel {
		t.Errorf("get: model = %v, want %q", got, server.UnnamedModel)
	}
	if stored, err := e.Server.Job(context.Background(), "beta", id); err != nil || stored.Model != "" {
		t.Errorf("stored job model = %q, %v; want none kept, so the agent picks its own", stored.Model, err)
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	revoked := e.AddKey("revoked", server.KeyParams{Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead}})
	if err := e.Server.RevokeKey(context.Background(), revoked.Key.ID); err != nil {
		t.Fatal(err)
	}
	e.AddKey("expiring", server.KeyParams{Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead},
		ExpiresAt: e.Clock.Now().Add(time.Hour)})
	e.Keys["unknown"] = "mint_" + strings.Repeat("x", 43)
	e.Keys["assistant"] = "mint_dsc_abc"

	tests := []struct {
		name, key, header, want string
	}{
		{"no header", "", "", "missing API key"},
		{"basic scheme", "", "Basic bWludDp4", "must be: Bearer <key>"},
		{"unknown key", "unknown", "", "invalid API key"},
		{"assistant key", "assistant", "", "is not an admin API key"},
		{"revoked key", "revoked", "", "revoked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var extra []string
			if tt.header != "" {
				extra = []string{"Authorization", tt.header}
			}
			resp, body := e.Do(tt.key, "GET", "/v2/agent/alpha/job/job_x", "", extra...)
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(servertest.ErrorOf(t, body), tt.want) {
				t.Fatalf("got %d %s, want 401 containing %q", resp.StatusCode, body, tt.want)
			}
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}

	t.Run("expired key", func(t *testing.T) {
		if resp, body := e.Do("expiring", "GET", "/v2/agent/alpha/job/job_x", ""); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("before expiry: %d %s, want 404 (the key works)", resp.StatusCode, body)
		}
		e.Clock.Advance(time.Hour)
		resp, body := e.Do("expiring", "GET", "/v2/agent/alpha/job/job_x", "")
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(servertest.ErrorOf(t, body), "expired") {
			t.Fatalf("after expiry: %d %s, want 401 expired", resp.StatusCode, body)
		}
	})
}

func TestReadOnlyKeyCannotCreateJobs(t *testing.T) {
	e := newEnv(t)
	resp, body := e.Do("ro", "POST", "/v2/agent/alpha/job", `{"prompt":"x"}`)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(servertest.ErrorOf(t, body), "write scope") {
		t.Fatalf("got %d %s, want 403 naming the write scope", resp.StatusCode, body)
	}
	jobs := countJobs(t, e, "alpha")
	if jobs != 0 {
		t.Fatalf("%d jobs stored, want none", jobs)
	}
	// Write implies read.
	if resp, body := e.Do("rw", "GET", "/v1/analytics/alpha/views", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("write key reading views: %d %s", resp.StatusCode, body)
	}
}

// countJobs counts a project's jobs through the store's claim queue, which
// sees every active job.
func countJobs(t *testing.T, e *env, project string) int {
	t.Helper()
	n := 0
	for {
		j, err := e.Store.ClaimJob(context.Background(), store.Claim{Owner: "counter", Now: e.Clock.Now(), LeaseFor: time.Hour, MaxAttempts: 100})
		if err != nil {
			return n
		}
		if j.ProjectID == project {
			n++
		}
	}
}

func TestKeyForOneProjectSeesNothingOfAnother(t *testing.T) {
	e := newEnv(t)
	_, body := e.Do("beta", "POST", "/v2/agent/beta/job", `{"prompt":"beta's secret plans"}`)
	betaJob := servertest.JobOf(t, body)["id"].(string)
	e.Store.AddViews(context.Background(), []store.ViewCount{{ProjectID: "beta", Path: "/secret", Hour: e.Clock.Now(), Human: 5}})

	// The alpha key asks for beta's project: refused, and refused exactly as
	// for a project that does not exist, so it learns nothing.
	respBeta, bodyBeta := e.Do("rw", "GET", "/v2/agent/beta/job/"+betaJob, "")
	respNone, bodyNone := e.Do("rw", "GET", "/v2/agent/gamma/job/"+betaJob, "")
	if respBeta.StatusCode != http.StatusForbidden || respNone.StatusCode != http.StatusForbidden {
		t.Fatalf("statuses %d and %d, want 403 for both", respBeta.StatusCode, respNone.StatusCode)
	}
	if strings.ReplaceAll(servertest.ErrorOf(t, bodyBeta), "beta", "gamma") != servertest.ErrorOf(t, bodyNone) {
		t.Errorf("the answers differ: %s vs %s", bodyBeta, bodyNone)
	}
	if resp, body := e.Do("rw", "GET", "/v1/analytics/beta/views", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("views of beta: %d %s, want 403", resp.StatusCode, body)
	}
	// Beta's job ID under alpha's path is simply not found.
	if resp, body := e.Do("rw", "GET", "/v2/agent/alpha/job/"+betaJob, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("beta's job under alpha: %d %s, want 404", resp.StatusCode, body)
	}
	if resp, _ := e.Do("rw", "POST", "/v2/agent/alpha/job/"+betaJob+"/message", `{"prompt":"x"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("message to beta's job under alpha: %d, want 404", resp.StatusCode)
	}
	_, body = e.Do("rw", "GET", "/v1/analytics/alpha/views", "")
	if bytes.Contains(body, []byte("/secret")) {
		t.Errorf("alpha's views show beta's page: %s", body)
	}
}

func TestStoredKeyMaterialIsNotTheKey(t *testing.T) {
	e := newEnv(t)
	keys, err := e.Server.Keys(context.Background())
	if err != nil || len(keys) != 3 {
		t.Fatalf("Keys = %d keys, %v", len(keys), err)
	}
	for _, k := range keys {
		for name, secret := range e.Keys {
			if bytes.Equal(k.Hash, []byte(secret)) || strings.Contains(k.Hint+k.Name+k.ID, secret[5:]) {
				t.Errorf("key %s stores the secret of %s", k.ID, name)
			}
		}
	}
	if err := e.Store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal"} {
		raw, err := os.ReadFile(e.DBPath + suffix)
		if err != nil {
			continue // no WAL file left after a clean close
		}
		for name, secret := range e.Keys {
			if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte(secret[5:])) {
				t.Errorf("the database file%s holds the secret of key %s", suffix, name)
			}
		}
	}
}

func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	const key = "release-2026-08-14"
	resp1, body1 := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"p"}`, "Idempotency-Key", key)
	resp2, body2 := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"p"}`, "Idempotency-Key", key)
	if resp1.StatusCode != http.StatusCreated || resp2.StatusCode != http.StatusCreated {
		t.Fatalf("statuses %d, %d; want 201 twice", resp1.StatusCode, resp2.StatusCode)
	}
	if id1, id2 := servertest.JobOf(t, body1)["id"], servertest.JobOf(t, body2)["id"]; id1 != id2 {
		t.Fatalf("a replay created a second job: %v and %v", id1, id2)
	}
	if n := countJobs(t, e, "alpha"); n != 1 {
		t.Fatalf("%d jobs stored, want 1", n)
	}
	resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"another"}`, "Idempotency-Key", key)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(servertest.ErrorOf(t, body), "Idempotency-Key") {
		t.Fatalf("reuse with another body: %d %s, want 409", resp.StatusCode, body)
	}
	for _, bad := range []string{strings.Repeat("k", 256), "has space"} {
		if resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"p"}`, "Idempotency-Key", bad); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("Idempotency-Key %q: %d %s, want 400", bad, resp.StatusCode, body)
		}
	}
}

func TestBadBodiesAreRefusedWithoutStoringAnything(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.MaxBodyBytes = 64; c.MaxPromptLength = 10 })
	tests := []struct {
		body   string
		status int
		want   string
	}{
		{`{"prompt":"` + strings.Repeat("a", 100) + `"}`, http.StatusRequestEntityTooLarge, "larger than 64 bytes"},
		{`{"prompt":"` + strings.Repeat("a", 11) + `"}`, http.StatusBadRequest, "the limit is 10"},
		{`{"prompt":""}`, http.StatusBadRequest, "must not be empty"},
		{`{"ref":"dev"}`, http.StatusBadRequest, `field "prompt" is required`},
		{`["prompt"]`, http.StatusBadRequest, "request body must be a JSON object, not a JSON array"},
		{`{"prompt":1}`, http.StatusBadRequest, `field "prompt" must be a string`},
		{`not json`, http.StatusBadRequest, "not valid JSON"},
	}
	for _, tt := range tests {
		resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", tt.body)
		if resp.StatusCode != tt.status || !strings.Contains(servertest.ErrorOf(t, body), tt.want) {
			t.Errorf("body %.40s: %d %s, want %d containing %q", tt.body, resp.StatusCode, body, tt.status, tt.want)
		}
	}
	if n := countJobs(t, e, "alpha"); n != 0 {
		t.Errorf("%d jobs stored, want none", n)
	}
}

func TestMessageToArchivedJobIsRefused(t *testing.T) {
	e := newEnv(t)
	_, body := e.Do("rw", "POST", "/v2/agent/alpha/job", `{"prompt":"p"}`)
	id := servertest.JobOf(t, body)["id"].(string)
	if _, err := e.Store.ArchiveJob(context.Background(), "alpha", id, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", `{"prompt":"more"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(servertest.ErrorOf(t, body), "archived") {
		t.Fatalf("got %d %s, want 400 archived", resp.StatusCode, body)
	}
	resp, body = e.Do("ro", "GET", "/v2/agent/alpha/job/"+id, "")
	if job := servertest.JobOf(t, body); resp.StatusCode != http.StatusOK || job["status"] != "archived" || job["archivedAt"] != "2026-08-14T09:00:00Z" {
		t.Fatalf("archived job reads %d %s", resp.StatusCode, body)
	}
}

func TestUnknownRoutesAndMethodsAnswerJSON(t *testing.T) {
	e := newEnv(t)
	// These requests are outside the document by definition, so they skip
	// the validator.
	e.Handler = e.Server
	resp, body := e.Do("rw", "GET", "/v2/agent/alpha/runs", "")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(servertest.ErrorOf(t, body), "no such endpoint") {
		t.Fatalf("unknown path: %d %s", resp.StatusCode, body)
	}
	resp, body = e.Do("rw", "DELETE", "/v2/agent/alpha/job/job_1", "")
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(servertest.ErrorOf(t, body), "DELETE") {
		t.Fatalf("wrong method: %d %q %s", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
}

func TestRequestIDs(t *testing.T) {
	e := newEnv(t)
	resp, _ := e.Do("ro", "GET", "/v2/agent/alpha/job/job_1", "", "X-Request-Id", "trace-42.a:b")
	if got := resp.Header.Get("X-Request-Id"); got != "trace-42.a:b" {
		t.Errorf("a sane incoming id is kept: got %q", got)
	}
	resp, _ = e.Do("ro", "GET", "/v2/agent/alpha/job/job_1", "", "X-Request-Id", "bad id\u00e9")
	if got := resp.Header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
		t.Errorf("an unsafe incoming id is replaced: got %q", got)
	}
	r1, _ := e.Do("", "GET", "/healthz", "")
	r2, _ := e.Do("", "GET", "/healthz", "")
	if a, b := r1.Header.Get("X-Request-Id"), r2.Header.Get("X-Request-Id"); a == "" || a == b {
		t.Errorf("generated ids %q and %q, want distinct and set", a, b)
	}
}

func TestRateLimitAnswers429WithRetryAfter(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.RateLimits = server.RateLimits{Agent: server.Limit{Requests: 2, Per: time.Minute}}
	})
	for i := range 2 {
		if resp, body := e.Do("ro", "GET", "/v2/agent/alpha/job/j", ""); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("request %d: %d %s, want 404 (under the limit)", i, resp.StatusCode, body)
		}
	}
	resp, body := e.Do("ro", "GET", "/v2/agent/alpha/job/j", "")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("third request: %d Retry-After %q %s, want 429 and 30", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// The analytics budget is separate, and so is every other key.
	if resp, _ := e.Do("ro", "GET", "/v1/analytics/alpha/views", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("analytics: %d, want 200", resp.StatusCode)
	}
	if resp, _ := e.Do("rw", "GET", "/v2/agent/alpha/job/j", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another key: %d, want 404", resp.StatusCode)
	}
	e.Clock.Advance(30 * time.Second)
	if resp, _ := e.Do("ro", "GET", "/v2/agent/alpha/job/j", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("after Retry-After: %d, want 404", resp.StatusCode)
	}
}

func TestHealthAndOpenAPIDocument(t *testing.T) {
	e := newEnv(t)
	resp, body := e.Do("", "GET", "/healthz", "")
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", resp.StatusCode, body)
	}
	resp, body = e.Do("", "GET", "/openapi.yaml", "")
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("openapi: 3.")) {
		t.Fatalf("openapi.yaml: %d %.40s", resp.StatusCode, body)
	}
	e.Store.Close()
	resp, _ = e.Do("", "GET", "/healthz", "")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("healthz on a closed store: %d, want 503", resp.StatusCode)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	e := newEnv(t)
	for name, cfg := range map[string]server.Config{
		"no store":        {},
		"bad prefix":      {Store: e.Store, KeyPrefix: "mint"},
		"negative prompt": {Store: e.Store, MaxPromptLength: -1},
		"negative body":   {Store: e.Store, MaxBodyBytes: -1},
		"half a limit":    {Store: e.Store, RateLimits: server.RateLimits{Analytics: server.Limit{Requests: 5}}},
		"nil engine":      {Store: e.Store, Jobs: (*engine.Engine)(nil)},
		"short secret":    {Store: e.Store, Secret: make([]byte, server.SecretBytes-1)},
		"long secret":     {Store: e.Store, Secret: make([]byte, server.SecretBytes+1)},
	} {
		if _, err := server.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestAdminRefusesBadProjectsAndKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.Server.CreateProject(ctx, store.Project{ID: "alpha"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("creating an existing project: %v, want one matching store.ErrConflict", err)
	}
	for _, p := range []store.Project{
		{ID: ""}, {ID: "../x"},
		{ID: "creds", Repository: "https://user:token@git.example.com/docs.git"},
	} {
		if _, err := e.Server.CreateProject(ctx, p); err == nil {
			t.Errorf("CreateProject(%+v) succeeded", p)
		}
	}
	for _, p := range []server.KeyParams{
		{Scopes: []store.Scope{store.ScopeRead}},
		{Projects: []string{"alpha"}},
		{Projects: []string{"alpha"}, Scopes: []store.Scope{"admin"}},
		{Projects: []string{"nope"}, Scopes: []store.Scope{store.ScopeRead}},
		{Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead}, ExpiresAt: e.Clock.Now()},
	} {
		if _, err := e.Server.CreateKey(ctx, p); err == nil {
			t.Errorf("CreateKey(%+v) succeeded", p)
		}
	}
	if err := e.Server.RevokeKey(ctx, "key_missing"); err == nil {
		t.Error("RevokeKey of a missing key succeeded")
	}
}
