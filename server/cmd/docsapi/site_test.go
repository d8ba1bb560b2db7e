package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

var siteTokenPattern = regexp.MustCompile(`^site_[A-Za-z0-9]{24}\n$`)

func TestSiteTokenCommands(t *testing.T) {
	data := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"DOCSAPI_DATA": data}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://github.com/acme/handbook.git").expect(t, exitOK)

	r := runCLI(t, env, "", "site", "token", "create", "--project", "handbook", "--origin", "https://Docs.Example.com:443,http://localhost:3000", "--name", "docs")
	r.expect(t, exitOK, "created site token for project handbook", `("docs")`, "https://docs.example.com", "data-token=")
	if !siteTokenPattern.MatchString(r.stdout) {
		t.Fatalf("site token create's stdout is %q, want the token and a newline only", r.stdout)
	}
	token := strings.TrimSpace(r.stdout)
	runCLI(t, env, "", "site", "token", "create", "--project", "handbook").expect(t, exitUsage, "--origin is required")
	runCLI(t, env, "", "site", "token", "create", "--origin", "https://a.example").expect(t, exitUsage, "no project: pass --project ID or set DOCSAPI_PROJECT")
	runCLI(t, env, "", "site", "token", "create", "--project", "handbook", "--origin", "https://docs.example.com/guide").
		expect(t, exitFailure, "no path, query or fragment")
	runCLI(t, env, "", "site", "token", "create", "--project", "handbook", "--origin", "*.example.com").expect(t, exitFailure, "scheme must be http or https")
	runCLI(t, env, "", "site", "token", "create", "--project", "nope", "--origin", "https://a.example").expect(t, exitFailure, `no project "nope"`)

	r = runCLI(t, env, "", "site", "token", "list")
	r.expect(t, exitOK)
	for _, want := range []string{token, "http://localhost:3000,https://docs.example.com", "handbook", "docs"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("site token list lacks %q:\n%s", want, r.stdout)
		}
	}
	runCLI(t, env, "", "site", "token", "revoke", token).expect(t, exitOK, "revoked site token "+token)
	r = runCLI(t, env, "", "site", "token", "list", "--project", "handbook", "--format", "json")
	r.expect(t, exitOK)
	var got siteTokenJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Token != token || got.Project != "handbook" || got.Name != "docs" || len(got.Origins) != 2 || got.RevokedAt == nil {
		t.Fatalf("site token list --format json: %+v", got)
	}
	r = runCLI(t, env, "", "site", "token", "list", "--project", "other")
	if r.expect(t, exitOK); strings.Contains(r.stdout, token) {
		t.Errorf("another project's list shows the token:\n%s", r.stdout)
	}
	runCLI(t, env, "", "site", "token", "revoke", "site_nope").expect(t, exitFailure, `no site token "site_nope"`, "docsapi site token list")
	runCLI(t, env, "", "site").expect(t, exitUsage, "site token create")
}

func TestFeedbackCommands(t *testing.T) {
	data := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"DOCSAPI_DATA": data}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://github.com/acme/handbook.git").expect(t, exitOK)
	st, err := sqlite.Open(t.Context(), filepath.Join(data, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)
	comment := "Step 2\nfails on Windows, and the error message says nothing about why it fails at all."
	for _, n := range []store.NewFeedback{
		{ID: "fb_1", ProjectID: "handbook", Path: "/quickstart", Source: store.FeedbackSourceThumbsOnly, Helpful: true, CreatedAt: at},
		{ID: "fb_2", ProjectID: "handbook", Path: "/quickstart", Source: store.FeedbackSourceContextual, Comment: &comment,
			Contact: "ada@example.com", CreatedAt: at.Add(time.Minute)},
		{ID: "fb_3", ProjectID: "handbook", Path: "/api", Source: store.FeedbackSourceCodeSnippet, Code: "go run .", CreatedAt: at.Add(2 * time.Minute)},
	} {
		if _, err := st.AddFeedback(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	r := runCLI(t, env, "", "feedback", "list", "--project", "handbook")
	r.expect(t, exitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "fb_3") || !strings.HasPrefix(lines[3], "fb_1") ||
		!strings.Contains(lines[2], `"Step 2 fails on Windows, and the error message says nothing…"`) || !strings.Contains(lines[3], "yes") {
		t.Fatalf("feedback list:\n%s", r.stdout)
	}
	runCLI(t, env, "", "feedback", "set-status", "--project", "handbook", "fb_2", "resolved").expect(t, exitOK, "feedback fb_2 is resolved")
	r = runCLI(t, env, "", "feedback", "list", "--project", "handbook", "--status", "resolved", "--format", "json")
	r.expect(t, exitOK)
	var got feedbackJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "fb_2" || got.Status != "resolved" || got.Comment == nil || *got.Comment != comment || got.Contact != "ada@example.com" {
		t.Fatalf("feedback list --status resolved: %+v", got)
	}
	r = runCLI(t, env, "", "feedback", "list", "--project", "handbook", "--limit", "1", "--format", "json")
	if r.expect(t, exitOK); strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, `"fb_3"`) {
		t.Fatalf("--limit 1:\n%s", r.stdout)
	}
	runCLI(t, env, "", "feedback", "set-status", "--project", "handbook", "fb_2", "closed").expect(t, exitUsage, `unknown status "closed"`)
	runCLI(t, env, "", "feedback", "set-status", "--project", "handbook", "fb_9", "resolved").expect(t, exitFailure, `no feedback "fb_9"`, "docsapi feedback list")
	runCLI(t, env, "", "feedback", "list").expect(t, exitUsage, "no project: pass --project ID or set DOCSAPI_PROJECT")
	// DOCSAPI_PROJECT names the project as it does for the API's commands.
	r = runCLI(t, withEnv(env, "DOCSAPI_PROJECT", "handbook"), "", "feedback", "list", "--limit", "1", "--format", "json")
	if r.expect(t, exitOK); !strings.Contains(r.stdout, `"fb_3"`) {
		t.Fatalf("feedback list with DOCSAPI_PROJECT:\n%s", r.stdout)
	}
	runCLI(t, withEnv(env, "DOCSAPI_PROJECT", "handbook"), "", "feedback", "set-status", "fb_9", "resolved").expect(t, exitFailure, `no feedback "fb_9" in project "handbook"`)
	runCLI(t, env, "", "feedback", "list", "--project", "handbook", "--status", "open").expect(t, exitUsage, `unknown --status "open"`)
}
