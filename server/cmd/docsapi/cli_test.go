package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// result is what one in-process run of the program produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the program in-process with only the environment given, so
// the developer's own DOCSAPI_* variables never leak into a test. HOME is a
// fresh folder unless env names one, so a default data folder never lands
// in the real home.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	return runCLIContext(t.Context(), t, env, stdin, args...)
}

func runCLIContext(ctx context.Context, t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	if _, ok := env["HOME"]; !ok {
		env = withEnv(env, "HOME", t.TempDir())
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &stdout, &stderr, func(k string) string { return env[k] })
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// withEnv returns a copy of env with k set to v.
func withEnv(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range env {
		if key != k {
			out[key] = val
		}
	}
	return out
}

// expect checks the exit code and that each stream contains the fragments.
func (r result) expect(t *testing.T, code int, stderrHas ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range stderrHas {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no command", nil, []string{"Usage:", "Exit codes:"}},
		{"unknown command", []string{"deploy"}, []string{`unknown command "deploy"`, "docsapi help"}},
		{"flag before the command", []string{"--project", "p", "jobs", "get"}, []string{"flags come after the command"}},
		{"group without subcommand", []string{"jobs"}, []string{`"jobs" needs a subcommand`, "jobs create"}},
		{"unknown subcommand", []string{"key", "delete"}, []string{`unknown command "key delete"`, "key revoke"}},
		{"unknown flag", []string{"jobs", "get", "--bogus", "x"}, []string{"docsapi jobs get: provided but not defined: -bogus", "docsapi jobs get --help"}},
		{"a --key flag does not exist", []string{"jobs", "get", "--key", "mint_x", "j"}, []string{"not defined: -key"}},
		{"missing argument", []string{"jobs", "get", "--project", "p"}, []string{"missing argument ID"}},
		{"extra argument", []string{"jobs", "get", "a", "b"}, []string{`unexpected argument "b"`}},
		{"no prompt", []string{"jobs", "create"}, []string{"a prompt is required", "--prompt -"}},
		{"two prompts", []string{"jobs", "create", "--prompt", "a", "--prompt-file", "f"}, []string{"not both"}},
		{"empty prompt", []string{"jobs", "create", "--prompt", "  "}, []string{"the prompt is empty"}},
		{"bad timeout", []string{"jobs", "wait", "j", "--timeout", "-1s"}, []string{"--timeout must be positive"}},
		{"bad duration", []string{"jobs", "wait", "j", "--timeout", "soon"}, []string{`invalid value "soon" for flag -timeout`}},
		{"bad date", []string{"views", "export", "--from", "October"}, []string{`--from "October"`, "2026-10-01"}},
		{"bad format", []string{"views", "export", "--format", "xml"}, []string{`unknown format "xml": use jsonl or csv`}},
		{"unknown scope", []string{"key", "create", "--project", "p", "--scope", "admin"}, []string{`unknown scope "admin": use read or write`}},
		{"key without project", []string{"key", "create", "--scope", "read"}, []string{"--project is required"}},
		{"bad expiry", []string{"key", "create", "--project", "p", "--scope", "read", "--expires", "soon"}, []string{`--expires "soon"`}},
		{"project without id", []string{"project", "create", "--repository", "r"}, []string{"--id is required"}},
		{"both storages", []string{"project", "list", "--data", "d", "--database", "postgres://h/db"}, []string{"--data and --database are both set"}},
		{"not a postgres URL", []string{"project", "list", "--database", "mysql://h/db"}, []string{"must start with postgres://"}},
		{"bad log format", []string{"serve", "--log-format", "xml", "--data", "d"}, []string{`unknown log format "xml"`}},
		{"bad log level", []string{"serve", "--log-level", "loud", "--data", "d"}, []string{`unknown log level "loud"`}},
		{"half TLS", []string{"serve", "--tls-cert", "c.pem", "--data", "d"}, []string{"both a certificate and a key"}},
		{"bad listen address", []string{"serve", "--listen", "8080", "--data", "d"}, []string{`listen address "8080"`, "host:port"}},
		{"missing config file", []string{"serve", "--config", "/nonexistent/docsapi.json"}, []string{"--config", "no such file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"DOCSAPI_KEY": "mint_test", "DOCSAPI_PROJECT": "p"}
			r := runCLI(t, env, "", tc.args...)
			r.expect(t, exitUsage, tc.want...)
			if r.stdout != "" {
				t.Errorf("a usage error wrote to stdout:\n%s", r.stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"help", "jobs", "create"}, {"jobs", "create", "--help"},
		{"jobs", "create", "-h"}, {"jobs", "--help"}, {"help", "jobs"}, {"serve", "--help"},
		{"key", "create", "--help"}, {"views", "export", "--help"}, {"jobs", "get", "x", "--help"},
		{"visitors", "export", "--help"}, {"searches", "export", "--help"}, {"feedback", "export", "--help"}, {"jobs", "failure", "--help"},
		{"search", "--help"}, {"help", "search"},
	} {
		r := runCLI(t, nil, "", args...)
		r.expect(t, exitOK)
		if !strings.Contains(r.stdout, "docsapi") || r.stderr != "" {
			t.Errorf("%q: stdout %q, stderr %q", args, r.stdout, r.stderr)
		}
	}
	// Every command's help has a usage line, its flags with two dashes, and
	// examples; the waiting commands document the exit codes.
	for _, c := range commands() {
		h := commandHelp(c)
		if !strings.HasPrefix(h, "Usage: docsapi "+c.name) || !strings.Contains(h, "Examples:") {
			t.Errorf("help of %s lacks the usage line or examples:\n%s", c.name, h)
		}
		if strings.Contains(h, "\n  -") && !strings.Contains(h, "\n  --") {
			t.Errorf("help of %s shows single-dash flags:\n%s", c.name, h)
		}
		if strings.HasPrefix(c.name, "jobs ") && c.name != "jobs get" && c.name != "jobs list" && c.name != "jobs failure" && !strings.Contains(h, "3    the job ended failed") {
			t.Errorf("help of %s does not document the exit codes", c.name)
		}
	}
	// Each command is listed once, in the section of what it works on,
	// whatever its group: a group may have commands on both sides.
	main := runCLI(t, nil, "", "--help").stdout
	for section, names := range map[string][]string{
		"Self-hosting (on the server's storage)":        {"serve", "feedback list", "feedback set-status", "jobs failure"},
		"Client (any API base URL; key in DOCSAPI_KEY)": {"jobs create", "views export", "visitors export", "search", "searches export", "feedback export"},
		"Other": {"version"},
	} {
		_, list, _ := strings.Cut(main, "\n"+section+":\n")
		list, _, _ = strings.Cut(list, "\n\n")
		for _, n := range names {
			if !strings.Contains(list, "\n  "+n+" ") && !strings.HasPrefix(list, "  "+n+" ") {
				t.Errorf("section %q does not list %s:\n%s", section, n, list)
			}
		}
	}
	for _, c := range commands() {
		if n := strings.Count(main, "\n  "+c.name+" "); n != 1 {
			t.Errorf("the help lists %s %d times", c.name, n)
		}
	}
	if r := runCLI(t, nil, "", "help", "nope"); r.code != exitUsage {
		t.Errorf("help of an unknown command: exit %d", r.code)
	}
	// The command lists put every summary in one column, past the longest
	// name and two spaces.
	for _, args := range [][]string{{"--help"}, {"site", "--help"}, {"feedback", "--help"}, {"jobs", "--help"}} {
		column := -1
		for _, line := range strings.Split(runCLI(t, nil, "", args...).stdout, "\n") {
			for _, c := range commands() {
				if !strings.HasPrefix(line, "  "+c.name+" ") {
					continue
				}
				at := len(line) - len(strings.TrimLeft(line[2+len(c.name):], " "))
				if at-2-len(c.name) < 2 || column >= 0 && at != column {
					t.Errorf("%q: the summary of %s starts at column %d, want one column for all, two spaces past the longest name:\n%s", args, c.name, at, line)
				}
				column = at
			}
		}
		if column < 0 {
			t.Errorf("%q lists no command", args)
		}
	}
}

func TestServeHelpShowsAValidConfigFile(t *testing.T) {
	// The example in serve's help must parse, or users copying it get an
	// error first thing.
	h := serveHelp
	start, end := strings.Index(h, "\n{\n"), strings.Index(h, "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("serve's help holds no example configuration")
	}
	cfg, err := decodeConfig([]byte(h[start : end+2]))
	if err != nil {
		t.Fatalf("the example configuration does not parse: %v", err)
	}
	if len(cfg.Projects) != 3 || cfg.Projects[0].Host.TokenEnv != "GITHUB_TOKEN" {
		t.Fatalf("the example configuration parsed to %+v", cfg)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := runCLI(t, nil, "", args...)
		r.expect(t, exitOK)
		if !strings.HasPrefix(r.stdout, "docsapi ") || !strings.Contains(r.stdout, "SDK docsapi-go") {
			t.Errorf("%q printed %q", args, r.stdout)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		project string
		pos     []string
	}{
		{[]string{"--project", "p", "id"}, "p", []string{"id"}},
		{[]string{"id", "--project", "p"}, "p", []string{"id"}},
		{[]string{"a", "--project=p", "b"}, "p", []string{"a", "b"}},
		{[]string{"--", "--project", "p"}, "", []string{"--project", "p"}},
		{[]string{"a", "--", "-x"}, "", []string{"a", "-x"}},
		{[]string{"-"}, "", []string{"-"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		project := fs.String("project", "", "")
		pos, err := parseInterspersed(fs, tc.args)
		if err != nil || *project != tc.project || !slices.Equal(pos, tc.pos) {
			t.Errorf("%q: project %q, positional %q, err %v; want %q, %q", tc.args, *project, pos, err, tc.project, tc.pos)
		}
	}
}

func TestParseExpiry(t *testing.T) {
	now := mustTime(t, "2026-10-01T00:00:00Z")
	for in, want := range map[string]string{
		"720h":                 "2026-10-31T00:00:00Z",
		"90d":                  "2026-12-30T00:00:00Z",
		"2027-01-31":           "2027-01-31T00:00:00Z",
		"2027-01-31T12:00:00Z": "2027-01-31T12:00:00Z",
	} {
		got, err := parseExpiry(in, now)
		if err != nil || !got.Equal(mustTime(t, want)) {
			t.Errorf("parseExpiry(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"0h", "-5m", "0d", "tomorrow", "31/01/2027"} {
		if _, err := parseExpiry(bad, now); err == nil {
			t.Errorf("parseExpiry(%q) accepted it", bad)
		}
	}
}

func TestDefaultDataDir(t *testing.T) {
	env := map[string]string{"HOME": filepath.FromSlash("/home/ada")}
	got, err := defaultDataDir(func(k string) string { return env[k] })
	if want := filepath.FromSlash("/home/ada/.local/share/docsapi"); err != nil || got != want {
		t.Errorf("with HOME: %q, %v; want %q", got, err, want)
	}
	env["XDG_DATA_HOME"] = filepath.FromSlash("/data")
	got, _ = defaultDataDir(func(k string) string { return env[k] })
	if want := filepath.FromSlash("/data/docsapi"); got != want {
		t.Errorf("with XDG_DATA_HOME: %q, want %q", got, want)
	}
	if _, err := defaultDataDir(func(string) string { return "" }); err == nil {
		t.Error("no HOME and no XDG_DATA_HOME: no error")
	}
}
