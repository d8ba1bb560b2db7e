package main

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

var assistantKeyPattern = regexp.MustCompile(`^mint_dsc_[A-Za-z0-9]{43}\n$`)

func TestAssistantKeyCommands(t *testing.T) {
	data := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"DOCSAPI_DATA": data}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://github.com/acme/handbook.git", "--domain", "acme-handbook").expect(t, exitOK)
	runCLI(t, env, "", "project", "create", "--id", "plain", "--repository", "https://github.com/acme/plain.git").expect(t, exitOK)
	runCLI(t, env, "", "project", "create", "--id", "other", "--repository", "r", "--domain", "acme-handbook").
		expect(t, exitFailure, `the domain "acme-handbook" is project "handbook"'s already`)
	runCLI(t, env, "", "project", "create", "--id", "other", "--repository", "r", "--domain", "Acme").expect(t, exitFailure, "lower case (acme)")
	r := runCLI(t, env, "", "project", "list")
	if r.expect(t, exitOK); !strings.Contains(r.stdout, "DOMAIN") || !strings.Contains(r.stdout, "acme-handbook") {
		t.Errorf("project list does not show the domain:\n%s", r.stdout)
	}

	r = runCLI(t, env, "", "assistant", "key", "create", "--project", "handbook", "--origin", "https://Docs.Example.com:443,http://localhost:3000", "--name", "docs")
	r.expect(t, exitOK, "created assistant key akey_", "for project handbook", `("docs")`, "http://localhost:3000, https://docs.example.com and servers", "shown this once")
	if !assistantKeyPattern.MatchString(r.stdout) {
		t.Fatalf("assistant key create's stdout is %q, want the key and a newline only", r.stdout)
	}
	secret := strings.TrimSpace(r.stdout)
	r = runCLI(t, env, "", "assistant", "key", "create", "--project", "handbook")
	r.expect(t, exitOK, "allowed from servers only")
	runCLI(t, env, "", "assistant", "key", "create", "--project", "plain").expect(t, exitFailure, `project "plain" has no domain identifier`)
	runCLI(t, env, "", "assistant", "key", "create", "--project", "nope").expect(t, exitFailure, `no project "nope"`)
	runCLI(t, env, "", "assistant", "key", "create", "--project", "handbook", "--origin", "https://docs.example.com/guide").expect(t, exitFailure, "no path, query or fragment")
	runCLI(t, env, "", "assistant", "key", "create").expect(t, exitUsage, "no project: pass --project ID or set DOCSAPI_PROJECT")

	r = runCLI(t, env, "", "assistant", "key", "list", "--format", "json")
	r.expect(t, exitOK)
	if strings.Contains(r.stdout+r.stderr, secret[len("mint_dsc_")+4:]) {
		t.Fatalf("assistant key list shows the secret:\n%s", r.stdout)
	}
	var keys []assistantKeyJSON
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var k assistantKeyJSON
		if err := json.Unmarshal([]byte(line), &k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if len(keys) != 2 || keys[0].Project != "handbook" || keys[0].Name != "docs" || len(keys[0].Origins) != 2 ||
		!strings.HasPrefix(secret, strings.TrimSuffix(keys[0].Hint, "…")) || keys[1].Origins == nil || len(keys[1].Origins) != 0 {
		t.Fatalf("assistant key list --format json: %+v", keys)
	}
	runCLI(t, env, "", "assistant", "key", "revoke", keys[0].ID).expect(t, exitOK, "revoked assistant key "+keys[0].ID)
	r = runCLI(t, env, "", "assistant", "key", "list", "--project", "handbook")
	r.expect(t, exitOK)
	if !strings.Contains(r.stdout, "(servers only)") || !strings.Contains(r.stdout, keys[1].Hint) {
		t.Errorf("assistant key list:\n%s", r.stdout)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, keys[0].ID) == strings.HasSuffix(strings.TrimSpace(line), " -") && line != "" && !strings.HasPrefix(line, "ID") {
			t.Errorf("the key's line shows the wrong revocation: %q", line)
		}
	}
	if r := runCLI(t, env, "", "assistant", "key", "list", "--project", "plain"); strings.Contains(r.stdout, "akey_") {
		t.Errorf("another project's list shows keys:\n%s", r.stdout)
	}
	runCLI(t, env, "", "assistant", "key", "revoke", "akey_nope").expect(t, exitFailure, `no assistant key "akey_nope"`, "docsapi assistant key list")
	runCLI(t, env, "", "assistant").expect(t, exitUsage, "assistant key create")
}

func TestConfigDomainErrors(t *testing.T) {
	project := func(id, domain string) string {
		return `{"id": "` + id + `", "repository": "r", "domain": "` + domain + `", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}}`
	}
	for name, tc := range map[string]struct{ config, want string }{
		"upper case":  {`{"projects": [` + project("p", "Docs") + `]}`, `projects[0] ("p"): domain "Docs" holds upper-case letters; write it in lower case (docs)`},
		"a dot":       {`{"projects": [` + project("p", "docs.example.com") + `]}`, `projects[0] ("p"): domain "docs.example.com" holds '.'`},
		"a hyphen":    {`{"projects": [` + project("p", "docs-") + `]}`, `starts or ends with '-'`},
		"too long":    {`{"projects": [` + project("p", strings.Repeat("d", 64)) + `]}`, "longer than 63 characters"},
		"two of them": {`{"projects": [` + project("a", "docs") + `, ` + project("b", "docs") + `]}`, `projects[1] ("b"): domain "docs" is projects[0]'s ("a") too`},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, nil, "", "serve", "--config", configFile(t, tc.config), "--data", t.TempDir(), "--print-config")
			r.expect(t, exitUsage, tc.want)
		})
	}
	r := runCLI(t, nil, "", "serve", "--config", configFile(t, `{"projects": [`+project("a", "docs")+`, `+project("b", "")+`]}`), "--data", t.TempDir(), "--print-config")
	r.expect(t, exitOK)
	if !strings.Contains(r.stdout, `"domain": "docs"`) {
		t.Errorf("--print-config does not show the domain:\n%s", r.stdout)
	}
}

// serve's start makes the store's domains the file's, even when the file
// moves a domain from one project to another, and takes a domain it gives
// away from a project it does not list.
func TestSyncProjectsDomains(t *testing.T) {
	st, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	domains := func() map[string]string {
		ps, err := st.Projects(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, p := range ps {
			out[p.ID] = p.Domain
		}
		return out
	}
	project := func(id, domain string) store.Project {
		return store.Project{ID: id, Repository: "https://git.example.com/" + id + ".git", Domain: domain}
	}
	check := func(step string, want map[string]string) {
		t.Helper()
		got := domains()
		for id, d := range want {
			if got[id] != d {
				t.Errorf("%s: domains %v, want %v", step, got, want)
				return
			}
		}
	}
	if _, err := srv.CreateProject(t.Context(), project("gone", "legacy")); err != nil {
		t.Fatal(err)
	}
	must := func(step string, want ...store.Project) {
		t.Helper()
		if err := syncProjects(t.Context(), srv, st, want, log); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	must("first start", project("a", "docs"), project("b", ""))
	check("first start", map[string]string{"a": "docs", "b": "", "gone": "legacy"})
	must("swap", project("a", "other"), project("b", "docs"))
	check("swap", map[string]string{"a": "other", "b": "docs"})
	must("a new project takes a domain another gives up", project("a", ""), project("b", "docs"), project("c", "other"))
	check("a new project", map[string]string{"a": "", "b": "docs", "c": "other"})
	must("a domain of a project not listed", project("b", "legacy"), project("c", "other"))
	check("a domain of a project not listed", map[string]string{"b": "legacy", "c": "other", "gone": ""})
}
