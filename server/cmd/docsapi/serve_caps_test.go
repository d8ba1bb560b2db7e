package main

import (
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// resolvedSettings resolves serve's settings from the configuration file
// config, as serve does at start.
func resolvedSettings(t *testing.T, env map[string]string, config string) *serveSettings {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := &serveFlags{}
	f.register(fs)
	if err := fs.Parse([]string{"--config", config}); err != nil {
		t.Fatal(err)
	}
	set, err := f.resolve(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// "jobs" caps a job's prompt history: each field defaults on its own, the
// values reach the server, and neither can be negative, nor the characters
// below what one prompt may hold.
func TestServeJobsSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	for _, tt := range []struct {
		name, config        string
		prompts, characters int
	}{
		{"defaults", `{}`, 50, 128000},
		{"prompts alone", `{"jobs": {"maxPrompts": 5}}`, 5, 128000},
		{"characters alone", `{"jobs": {"maxPromptCharacters": 40000}}`, 50, 40000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config := configFile(t, tt.config)
			want := jsonText(map[string]int{"maxPrompts": tt.prompts, "maxPromptCharacters": tt.characters})
			if got := jsonText(printedConfig(t, env, "--config", config)["jobs"]); got != want {
				t.Errorf("jobs printed %s, want %s", got, want)
			}
			srv := resolvedSettings(t, env, config).serverConfig(nil, nil)
			if srv.MaxJobPrompts != tt.prompts || srv.MaxJobPromptLength != tt.characters {
				t.Errorf("the server is given %d prompts and %d characters, want %d and %d", srv.MaxJobPrompts, srv.MaxJobPromptLength, tt.prompts, tt.characters)
			}
		})
	}
	for config, msg := range map[string]string{
		`{"jobs": {"maxPrompts": -1}}`:             "jobs.maxPrompts must be 0 (the default, 50) or more, got -1",
		`{"jobs": {"maxPromptCharacters": -1}}`:    "jobs.maxPromptCharacters must be 0 (the default, 128000) or more, got -1",
		`{"jobs": {"maxPromptCharacters": 31999}}`: "jobs.maxPromptCharacters is 31999, below the 32000 characters one prompt may have",
		`{"jobs": {"maxPrompt": 3}}`:               `jobs: unknown field "maxPrompt"`,
		`{"jobs": {"maxPrompts": "many"}}`:         "jobs.maxPrompts: want a whole number",
	} {
		runCLI(t, env, "", "serve", "--print-config", "--config", configFile(t, config)).expect(t, exitUsage, msg)
	}
}

// An agent given its prompt on the command line shows every job's prompts
// to the host's local users: serve warns at every start, naming the
// project, and only then.
func TestServeWarnsOfPromptsOnCommandLines(t *testing.T) {
	path := configFile(t, `{"projects": [
  {"id": "stdin", "repository": "r", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "args": ["-p"], "sandbox": "off"}},
  {"id": "arg", "repository": "r", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "promptVia": "arg"}},
  {"id": "placeholder", "repository": "r", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "args": ["-c", "{prompt}"]}}
]}`)
	cfg, err := loadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := resolveProjects(cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var onCommandLine []string
	for _, w := range projects.warnings {
		if strings.Contains(w, "every local user can read a process's arguments") {
			onCommandLine = append(onCommandLine, w[:strings.Index(w, ":")])
		}
	}
	if want := []string{`projects[1] ("arg").agent`, `projects[2] ("placeholder").agent`}; !slices.Equal(onCommandLine, want) {
		t.Errorf("warned of prompts on command lines for %q, want %q; all warnings: %q", onCommandLine, want, projects.warnings)
	}
}

// git.maxPublishFiles and git.maxPublishBytes bound what a job may
// publish: printed with their defaults, given to the workspaces as
// written, and never negative.
func TestServeGitPublishSettings(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	for _, tt := range []struct {
		name, config string
		files        int   // printed
		bytes        int64 // printed
		given        [2]int64
	}{
		{"defaults", `{}`, 1000, 20 << 20, [2]int64{0, 0}},
		{"files alone", `{"git": {"maxPublishFiles": 5000}}`, 5000, 20 << 20, [2]int64{5000, 0}},
		{"bytes alone", `{"git": {"maxPublishBytes": 1048576}}`, 1000, 1 << 20, [2]int64{0, 1 << 20}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config := configFile(t, tt.config)
			git, _ := printedConfig(t, env, "--config", config)["git"].(map[string]any)
			if git["maxPublishFiles"] != float64(tt.files) || git["maxPublishBytes"] != float64(tt.bytes) {
				t.Errorf("git printed %v, want maxPublishFiles %d and maxPublishBytes %d", git, tt.files, tt.bytes)
			}
			// 0 stands for gitrepo's default, which it fills in.
			g := resolvedSettings(t, env, config).file.Git.config(nil)
			if got := [2]int64{int64(g.MaxPublishFiles), g.MaxPublishBytes}; got != tt.given {
				t.Errorf("the workspaces are given %v (files, bytes), want %v", got, tt.given)
			}
		})
	}
	for config, msg := range map[string]string{
		`{"git": {"maxPublishFiles": -1}}`: "git.maxPublishFiles must be 0 (the default, 1000) or more, got -1",
		`{"git": {"maxPublishBytes": -1}}`: "git.maxPublishBytes must be 0 (the default, 20971520) or more, got -1",
	} {
		runCLI(t, env, "", "serve", "--print-config", "--config", configFile(t, config)).expect(t, exitUsage, msg)
	}
}
