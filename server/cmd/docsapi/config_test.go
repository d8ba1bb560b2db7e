package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	commandagent "github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/runner"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A minimal valid project, as a JSON fragment tests build on.
const pushOnlyProject = `{"id": "handbook", "repository": "https://git.example.com/handbook.git",
  "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}}`

func configFile(t *testing.T, content string) string {
	t.Helper()
	return writeFile(t, filepath.Join(t.TempDir(), "docsapi.json"), content)
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"unknown top-level field", `{"listn": "x"}`, []string{`top level: unknown field "listn"`, "known fields:", "listen"}},
		{"wrong case", `{"Listen": "x"}`, []string{`unknown field "Listen" (did you mean "listen"?)`}},
		{"unknown nested field", `{"projects": [` + pushOnlyProject + `, {"id": "b", "agent": {"kind": "command", "comand": "x"}}]}`,
			[]string{`projects[1].agent: unknown field "comand"`}},
		{"literal token", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "github", "token": "ghp_LITERALSECRET"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{`projects[0].host: field "token" would put a secret in the file`, `"tokenEnv"`, `"tokenFile"`}},
		{"literal password", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only", "password": "hunter2-LITERALSECRET"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{`field "password" would put a secret in the file`}},
		{"literal API key", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "llm", "apiKey": "sk-LITERALSECRET"}}]}`,
			[]string{`projects[0].agent: field "apiKey"`, `"apiKeyEnv"`}},
		{"database password", `{"database": "postgres://docsapi:LITERALSECRET@db/docsapi"}`, []string{"holds a password", "DOCSAPI_DATABASE_URL"}},
		{"database password in the query", `{"database": "postgres://db/docsapi?password=LITERALSECRET"}`, []string{"holds a password"}},
		{"syntax error", "{\n  \"listen\": \"x\",\n  \"data\" \"y\"\n}", []string{"line 3, column 10"}},
		{"wrong type", `{"projects": [{"id": "p", "host": {"draft": "yes"}}]}`, []string{"projects[0].host.draft: want true or false, got a string"}},
		{"bad duration", `{"shutdownGrace": "a while"}`, []string{`shutdownGrace: "a while" is not a duration`}},
		{"negative mirror idle", `{"git": {"mirrorIdle": "-1h"}}`, []string{`git.mirrorIdle: "-1h" is negative`}},
		{"wrong type in a map", `{"projects": [{"agent": {"env": {"A": 1}}}]}`, []string{`projects[0].agent.env["A"]: want a string, got a number`}},
		{"fraction", `{"engine": {"concurrency": 1.5}}`, []string{"engine.concurrency: want a whole number"}},
		{"two objects", `{} {}`, []string{"data after the JSON object"}},
		{"not an object", `[]`, []string{"must hold a JSON object"}},
		{"empty file", ``, []string{"the file is empty"}},
		{"missing id", `{"projects": [{"repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}}]}`, []string{"projects[0]: id is required"}},
		{"duplicate id", `{"projects": [` + pushOnlyProject + `,` + pushOnlyProject + `]}`, []string{`projects[1] ("handbook"): the id is used by an earlier project`}},
		{"credentials in the repository", `{"projects": [{"id": "p", "repository": "https://bot:LITERALSECRET@github.com/a/b.git", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{"repository must not contain credentials"}},
		{"unknown host", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "bitbucket"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{`projects[0] ("p").host: unknown kind "bitbucket": use github, gitlab or push-only`}},
		{"github without token", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "github"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{"kind github needs a token"}},
		{"token env not set", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "github", "tokenEnv": "NOT_SET_TOKEN"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{"tokenEnv names the environment variable NOT_SET_TOKEN, which is not set"}},
		{"token env and file", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "github", "tokenEnv": "A", "tokenFile": "b"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{"set tokenEnv or tokenFile, not both"}},
		{"missing token file", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "gitlab", "tokenFile": "nope.txt"}, "agent": {"kind": "command", "command": "sh"}}]}`,
			[]string{"tokenFile", "nope.txt"}},
		{"field of the other agent kind", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "provider": "openai"}}]}`,
			[]string{"provider is a field of kind llm, not command"}},
		{"llm without model", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "llm", "provider": "openai"}}]}`,
			[]string{"a model is required"}},
		{"{model} without a model", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "claude", "args": ["-p", "--model={model}"]}}]}`,
			[]string{`projects[0] ("p").agent: args[1] uses {model}, but the project names no model: set the project's model`}},
		{"two models", `{"projects": [{"id": "p", "repository": "r", "model": "a", "host": {"kind": "push-only"}, "agent": {"kind": "llm", "provider": "openai", "model": "b"}}]}`,
			[]string{`model "b" differs from the project's model "a"`}},
		{"sandbox neither off nor an object", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": "no"}}]}`,
			[]string{`projects[0].agent.sandbox: "no" is not a sandbox setting: write "off"`}},
		{"sandbox false", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": false}}]}`,
			[]string{`projects[0].agent.sandbox: want an object, got true or false`}},
		{"unknown sandbox field", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"allowHost": ["a.example"]}}}]}`,
			[]string{`projects[0].agent.sandbox: unknown field "allowHost"`}},
		{"sandbox size without a unit we know", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"memory": "2GB"}}}]}`,
			[]string{`projects[0].agent.sandbox.memory: "2GB" is not a size such as "512MiB"`}},
		{"negative sandbox size", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"homeSize": -1}}}]}`,
			[]string{`projects[0].agent.sandbox.homeSize: -1 is not a size`}},
		{"sandbox size of the wrong type", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"tmpSize": true}}}]}`,
			[]string{`projects[0].agent.sandbox.tmpSize: want a size`}},
		{"too few processes", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"maxProcesses": 3}}}]}`,
			[]string{`projects[0] ("p").agent: sandbox.maxProcesses is 3; an agent needs at least 16`}},
		{"negative processes", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"maxProcesses": -5}}}]}`,
			[]string{`projects[0] ("p").agent: sandbox.maxProcesses is -5; it must not be negative`}},
		{"too little memory", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"memory": "16MiB"}}}]}`,
			[]string{`projects[0] ("p").agent: sandbox.memory is 16 MiB; an agent needs at least 64 MiB`}},
		{"file systems past the memory", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": {"memory": "1GiB", "homeSize": "1GiB"}}}]}`,
			[]string{`projects[0] ("p").agent: sandbox.tmpSize + sandbox.shmSize + sandbox.homeSize is 1344 MiB, not below sandbox.memory (1 GiB)`}},
		{"workspace growth too small", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "maxWorkspaceGrowth": "512KiB"}}]}`,
			[]string{`projects[0] ("p").agent: maxWorkspaceGrowth is 512 KiB; the smallest is 1 MiB`}},
		{"workspace growth without a unit we know", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "maxWorkspaceGrowth": "1GB"}}]}`,
			[]string{`projects[0].agent.maxWorkspaceGrowth: "1GB" is not a size such as "512MiB"`}},
		{"negative workspace files", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": "off", "maxWorkspaceFiles": -1}}]}`,
			[]string{`projects[0] ("p").agent: maxWorkspaceFiles is -1; it must not be negative`}},
		{"workspace limit of an llm agent", `{"projects": [{"id": "p", "repository": "r", "model": "m", "host": {"kind": "push-only"}, "agent": {"kind": "llm", "provider": "openai", "maxWorkspaceGrowth": "2GiB"}}]}`,
			[]string{"maxWorkspaceGrowth is a field of kind command, not llm"}},
		{"sandbox of an llm agent", `{"projects": [{"id": "p", "repository": "r", "model": "m", "host": {"kind": "push-only"}, "agent": {"kind": "llm", "provider": "openai", "sandbox": "off"}}]}`,
			[]string{"sandbox is a field of kind command, not llm"}},
		{"trusted proxy that is a name", `{"trustedProxies": ["10.0.0.0/8", "proxy.internal"]}`,
			[]string{`trustedProxies[1]: "proxy.internal" is neither an IP address nor a network in CIDR notation`}},
		{"trusted proxy with a zone", `{"trustedProxies": ["fe80::1%eth0"]}`, []string{`trustedProxies[0]: "fe80::1%eth0"`}},
		{"unknown agent", `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "magic"}}]}`,
			[]string{`unknown kind "magic": use command or llm`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := configFile(t, tc.config)
			r := runCLI(t, nil, "", "serve", "--config", path, "--data", t.TempDir(), "--print-config")
			r.expect(t, exitUsage, tc.want...)
			if !strings.Contains(r.stderr, path) {
				t.Errorf("the error does not name the file %s:\n%s", path, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, "LITERALSECRET") {
				t.Errorf("the error repeats the secret:\n%s", r.stderr)
			}
		})
	}
}

// TestSandboxSettings: a command agent is sandboxed unless its
// configuration says "off", which serve warns about at every start; the
// settings reach the agent and read back the same.
// git.mirrorIdle reaches the mirrors' settings as a duration.
func TestMirrorIdleSetting(t *testing.T) {
	cfg, err := decodeConfig([]byte(`{"git": {"mirrorIdle": "240h"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(cfg.Git.MirrorIdle); got != 240*time.Hour {
		t.Fatalf("git.mirrorIdle = %v, want 240h", got)
	}
}

func TestSandboxSettings(t *testing.T) {
	path := configFile(t, `{"git": {"workDir": "runs"}, "projects": [
  {"id": "open", "repository": "r", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "sandbox": "off"}},
  {"id": "tight", "repository": "r", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "sandbox": {"allowHosts": ["api.anthropic.com"], "allowAddresses": ["10.0.0.0/8"], "readOnly": ["tools"],
             "maxProcesses": 100, "memory": "3GiB", "tmpSize": 134217728, "shmSize": "32 MiB", "homeSize": "1GiB"}}},
  {"id": "plain", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}}
]}`)
	cfg, err := loadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := resolveProjects(cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	open, tight := projects.runner["open"].Agent.Command.Sandbox, projects.runner["tight"].Agent.Command.Sandbox
	if open.Mode != sandbox.Off {
		t.Errorf(`"off" gave %+v`, open)
	}
	if tight.Mode != "" || !slices.Equal(tight.AllowHosts, []string{"api.anthropic.com"}) || !slices.Equal(tight.AllowAddresses, []string{"10.0.0.0/8"}) ||
		!slices.Equal(tight.ReadOnly, []string{filepath.Join(filepath.Dir(path), "tools")}) {
		t.Errorf("the object gave %+v", tight)
	}
	if want := (sandbox.Limits{MaxProcesses: 100, Memory: 3 << 30, TmpSize: 128 << 20, ShmSize: 32 << 20, HomeSize: 1 << 30}); tight.Limits != want {
		t.Errorf("the limits are %+v, want %+v", tight.Limits, want)
	}
	if plain := projects.runner["plain"].Agent.Command.Sandbox; plain.Limits != (sandbox.Limits{}) {
		t.Errorf("limits not configured gave %+v, want zero (the sandbox's defaults)", plain.Limits)
	}
	self, _ := os.Executable()
	if !slices.Equal(tight.Bridge, []string{self, "sandbox-bridge"}) {
		t.Errorf("the bridge is %q, want this program's sandbox-bridge", tight.Bridge)
	}
	if len(projects.warnings) != 1 || !strings.Contains(projects.warnings[0], `projects[0] ("open").agent: sandbox is "off"`) {
		t.Errorf("warnings %q, want one about the project without a sandbox", projects.warnings)
	}
	r := runCLI(t, nil, "", "serve", "--config", path, "--data", t.TempDir(), "--print-config")
	r.expect(t, exitOK)
	if !strings.Contains(r.stdout, `"sandbox": "off"`) || !strings.Contains(r.stdout, `"allowHosts": [`) || !strings.Contains(r.stdout, `"allowAddresses": [`) {
		t.Errorf("--print-config does not show the sandbox settings:\n%s", r.stdout)
	}
	// The limits as configured, and the defaults where none is.
	flat := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{
		`"maxProcesses": 100, "memory": "3GiB", "tmpSize": "128MiB", "shmSize": "32MiB", "homeSize": "1GiB"`,
		`"maxProcesses": 256, "memory": "2GiB", "tmpSize": "256MiB", "shmSize": "64MiB", "homeSize": "512MiB"`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("--print-config does not show %s:\n%s", want, r.stdout)
		}
	}
}

// TestWorkspaceSettings: a command agent's workspace limits reach it,
// with the sandbox on or off, and read back with their defaults.
func TestWorkspaceSettings(t *testing.T) {
	path := configFile(t, `{"git": {"workDir": "runs"}, "projects": [
  {"id": "open", "repository": "r", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "sandbox": "off", "maxWorkspaceGrowth": "256MiB", "maxWorkspaceFiles": 5000}},
  {"id": "tight", "repository": "r", "host": {"kind": "push-only"},
   "agent": {"kind": "command", "command": "sh", "maxWorkspaceGrowth": 104857600}},
  {"id": "plain", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}}
]}`)
	cfg, err := loadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := resolveProjects(cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]commandagent.WorkspaceLimits{
		"open":  {MaxGrowth: 256 << 20, MaxFiles: 5000},
		"tight": {MaxGrowth: 100 << 20},
		"plain": {},
	} {
		if got := projects.runner[id].Agent.Command.Workspace; got != want {
			t.Errorf("%s: the workspace limits are %+v, want %+v", id, got, want)
		}
	}
	r := runCLI(t, nil, "", "serve", "--config", path, "--data", t.TempDir(), "--print-config")
	r.expect(t, exitOK)
	flat := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{
		`"maxWorkspaceGrowth": "256MiB", "maxWorkspaceFiles": 5000`,
		`"maxWorkspaceGrowth": "100MiB", "maxWorkspaceFiles": 200000`,
		`"maxWorkspaceGrowth": "1GiB", "maxWorkspaceFiles": 200000`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("--print-config does not show %s:\n%s", want, r.stdout)
		}
	}
}

func TestSecretsResolved(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gitlab.token"), "glpat-FROMFILE\n")
	path := writeFile(t, filepath.Join(dir, "docsapi.json"), `{"projects": [
	  {"id": "gh", "repository": "https://github.com/a/b.git", "host": {"kind": "github", "tokenEnv": "GH_TOKEN", "draft": true},
	   "agent": {"kind": "llm", "provider": "anthropic", "model": "m", "apiKeyEnv": "LLM_KEY", "limits": {"maxTurns": 7}}},
	  {"id": "gl", "repository": "https://gitlab.com/a/b.git", "host": {"kind": "gitlab", "tokenFile": "gitlab.token"},
	   "agent": {"kind": "command", "command": "sh", "args": ["-c", "true"], "timeout": "90s", "passEnv": ["X"]}},
	  {"id": "plain", "repository": "https://git.example.com/c.git", "host": {"kind": "push-only", "tokenEnv": "GIT_PW"},
	   "agent": {"kind": "command", "command": "sh"}}
	]}`)
	cfg, err := loadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GH_TOKEN": " ghp-FROMENV ", "LLM_KEY": "sk-FROMENV", "GIT_PW": "pw-FROMENV"}
	got, err := resolveProjects(cfg, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	gh, gl, plain := got.runner["gh"], got.runner["gl"], got.runner["plain"]
	switch {
	case gh.Host.Kind != runner.GitHub || gh.Host.GitHub.Token != "ghp-FROMENV" || !gh.Host.GitHub.Draft:
		t.Errorf("github host: %v", gh.Host.GitHub)
	case gh.Agent.Kind != runner.LLM || gh.Agent.LLM.APIKey != "sk-FROMENV" || gh.Agent.LLM.Model != "m" || gh.Agent.LLM.MaxTurns != 7:
		t.Errorf("llm agent: %v", gh.Agent.LLM)
	case gl.Host.Kind != runner.GitLab || gl.Host.GitLab.Token != "glpat-FROMFILE":
		t.Errorf("gitlab host: %v (the file's path is relative to the configuration file)", gl.Host.GitLab)
	case gl.Agent.Command.Timeout != 90*time.Second || gl.Agent.Command.Args[1] != "true":
		t.Errorf("command agent: %+v", gl.Agent.Command)
	case plain.Host.GitUsername != "git" || plain.Host.GitPassword != "pw-FROMENV":
		t.Errorf("push-only credentials: %q / %q", plain.Host.GitUsername, plain.Host.GitPassword)
	}
	// The project takes the agent's model, which is the one jobs report; a
	// command agent's project with no model takes the program's name.
	if len(got.store) != 3 || got.store[0].Model != "m" || got.store[1].ID != "gl" || got.store[1].Model != "sh" || got.store[2].Model != "sh" {
		t.Errorf("projects for the store: %+v", got.store)
	}
	// The token file is 0600: no warning.
	if len(got.warnings) != 0 {
		t.Errorf("warnings: %q", got.warnings)
	}
}

func TestPrintConfigRedactsSecrets(t *testing.T) {
	path := configFile(t, `{
	  "git": {"env": ["HTTPS_PROXY=http://user:proxy-SECRET1@proxy:3128"]},
	  "projects": [{"id": "gh", "repository": "https://github.com/a/b.git", "model": "m",
	    "host": {"kind": "github", "tokenEnv": "GITHUB_TOKEN"},
	    "agent": {"kind": "command", "command": "sh", "env": {"AGENT_TOKEN": "agent-SECRET2"}}}]}`)
	env := map[string]string{
		"GITHUB_TOKEN":         "ghp_SECRET3",
		"DOCSAPI_DATABASE_URL": "postgres://docsapi:db-SECRET4@db.example.com/docsapi?sslmode=require&password=db-SECRET5",
	}
	r := runCLI(t, env, "", "serve", "--config", path, "--print-config")
	r.expect(t, exitOK, "storage: from DOCSAPI_DATABASE_URL", "the secrets it names are set")
	if strings.Contains(r.stdout+r.stderr, "SECRET") {
		t.Fatalf("a secret was printed:\n%s\n%s", r.stdout, r.stderr)
	}
	var printed fileConfig
	if err := json.Unmarshal([]byte(r.stdout), &printed); err != nil {
		t.Fatalf("--print-config did not print JSON: %v\n%s", err, r.stdout)
	}
	p := printed.Projects[0]
	switch {
	case p.Host.TokenEnv != "GITHUB_TOKEN":
		t.Errorf("the token's variable name is not shown: %+v", p.Host)
	case p.Agent.Env["AGENT_TOKEN"] != redacted:
		t.Errorf("agent env: %v", p.Agent.Env)
	case printed.Git.Env[0] != "HTTPS_PROXY="+redacted:
		t.Errorf("git env: %v", printed.Git.Env)
	case !strings.HasPrefix(printed.Database, "postgres://docsapi:xxxxx@db.example.com/docsapi?"):
		t.Errorf("database: %q", printed.Database)
	case printed.Engine.Concurrency != 2 || time.Duration(printed.Engine.PollInterval) != 5*time.Second:
		t.Errorf("the engine's defaults are not filled in: %+v", printed.Engine)
	}
	// What was printed is itself a valid configuration file (less the
	// database URL, which came from the environment).
	printed.Database = ""
	again, _ := json.Marshal(printed)
	if _, err := decodeConfig(again); err != nil {
		t.Errorf("the printed configuration does not parse again: %v", err)
	}
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	fileData := filepath.Join(dir, "from-file")
	path := writeFile(t, filepath.Join(dir, "docsapi.json"), `{"listen": "127.0.0.1:1001", "data": "from-file",
	  "shutdownGrace": "11s", "log": {"level": "warn"}, "pageViews": {"flushInterval": "3s"}}`)
	envData := filepath.Join(dir, "from-env")
	flagData := filepath.Join(dir, "from-flag")
	env := map[string]string{"DOCSAPI_LISTEN": "127.0.0.1:2002", "DOCSAPI_DATA": envData}

	printed := func(t *testing.T, env map[string]string, args ...string) fileConfig {
		t.Helper()
		r := runCLI(t, env, "", append([]string{"serve", "--print-config"}, args...)...)
		r.expect(t, exitOK)
		var c fileConfig
		if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	type want struct {
		listen, data string
		grace        time.Duration
	}
	check := func(t *testing.T, c fileConfig, w want) {
		t.Helper()
		if c.Listen != w.listen || c.Data != w.data || time.Duration(c.ShutdownGrace) != w.grace {
			t.Errorf("listen %q, data %q, grace %s; want %q, %q, %s", c.Listen, c.Data, time.Duration(c.ShutdownGrace), w.listen, w.data, w.grace)
		}
	}
	home := t.TempDir()
	t.Run("defaults", func(t *testing.T) {
		c := printed(t, map[string]string{"HOME": home})
		check(t, c, want{defaultListen, filepath.Join(home, ".local", "share", "docsapi"), defaultShutdownGrace})
		if c.Log.Level != "info" || time.Duration(c.PageViews.FlushInterval) != 10*time.Second {
			t.Errorf("log level %q, flush %s", c.Log.Level, time.Duration(c.PageViews.FlushInterval))
		}
	})
	t.Run("file over defaults", func(t *testing.T) {
		c := printed(t, nil, "--config", path)
		check(t, c, want{"127.0.0.1:1001", fileData, 11 * time.Second})
		if c.Log.Level != "warn" || time.Duration(c.PageViews.FlushInterval) != 3*time.Second {
			t.Errorf("log level %q, flush %s", c.Log.Level, time.Duration(c.PageViews.FlushInterval))
		}
	})
	t.Run("the file named by the environment", func(t *testing.T) {
		check(t, printed(t, map[string]string{"DOCSAPI_CONFIG": path}), want{"127.0.0.1:1001", fileData, 11 * time.Second})
	})
	t.Run("environment over file", func(t *testing.T) {
		check(t, printed(t, env, "--config", path), want{"127.0.0.1:2002", envData, 11 * time.Second})
	})
	t.Run("flags over environment", func(t *testing.T) {
		c := printed(t, env, "--config", path, "--listen", "127.0.0.1:3003", "--data", flagData, "--shutdown-grace", "5s", "--log-level", "debug")
		check(t, c, want{"127.0.0.1:3003", flagData, 5 * time.Second})
		if c.Log.Level != "debug" {
			t.Errorf("log level %q", c.Log.Level)
		}
	})
	t.Run("a flag given its default value still wins", func(t *testing.T) {
		check(t, printed(t, env, "--config", path, "--listen", defaultListen), want{defaultListen, envData, 11 * time.Second})
	})
	t.Run("--data wins over DOCSAPI_DATABASE_URL", func(t *testing.T) {
		c := printed(t, map[string]string{"DOCSAPI_DATABASE_URL": "postgres://db/docsapi"}, "--data", flagData)
		if c.Data != flagData || c.Database != "" {
			t.Errorf("data %q, database %q", c.Data, c.Database)
		}
	})
	t.Run("the environment's database over the file's folder", func(t *testing.T) {
		c := printed(t, map[string]string{"DOCSAPI_DATABASE_URL": "postgres://db/docsapi"}, "--config", path)
		if c.Data != "" || c.Database != "postgres://db/docsapi" {
			t.Errorf("data %q, database %q", c.Data, c.Database)
		}
	})
	t.Run("both storages in the environment", func(t *testing.T) {
		r := runCLI(t, withEnv(env, "DOCSAPI_DATABASE_URL", "postgres://db/x"), "", "serve", "--print-config")
		r.expect(t, exitUsage, "DOCSAPI_DATA and DOCSAPI_DATABASE_URL are both set")
	})
}

func TestConfigPathsAreRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, filepath.Join(dir, "docsapi.json"), `{"data": "state", "tls": {"cert": "c.pem", "key": "/etc/k.pem"},
	  "git": {"workDir": "work"},
	  "projects": [{"id": "p", "repository": "repos/docs.git", "host": {"kind": "push-only"},
	    "agent": {"kind": "command", "command": "./bin/agent"}},
	   {"id": "q", "repository": "git@github.com:a/b.git", "host": {"kind": "push-only"},
	    "agent": {"kind": "command", "command": "claude"}}]}`)
	cfg, err := loadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		cfg.Data:                      filepath.Join(dir, "state"),
		cfg.TLS.Cert:                  filepath.Join(dir, "c.pem"),
		cfg.TLS.Key:                   "/etc/k.pem",
		cfg.Git.WorkDir:               filepath.Join(dir, "work"),
		cfg.Projects[0].Repository:    filepath.Join(dir, "repos", "docs.git"),
		cfg.Projects[0].Agent.Command: filepath.Join(dir, "bin", "agent"),
		cfg.Projects[1].Repository:    "git@github.com:a/b.git",
		cfg.Projects[1].Agent.Command: "claude",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestTokenFileReadableByOthersWarns(t *testing.T) {
	dir := t.TempDir()
	tok := writeFile(t, filepath.Join(dir, "tok"), "secret-value")
	if err := os.Chmod(tok, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := decodeConfig([]byte(`{"projects": [{"id": "p", "repository": "r", "host": {"kind": "github", "tokenFile": "` + filepath.ToSlash(tok) + `"}, "agent": {"kind": "command", "command": "sh"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := resolveProjects(cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(got.warnings) != 1 || !strings.Contains(got.warnings[0], "chmod 600") || strings.Contains(got.warnings[0], "secret-value") {
		t.Errorf("warnings: %q", got.warnings)
	}
}

// TestByteSize: the sizes a configuration may write, and how they are
// printed back (which reads back the same).
func TestByteSize(t *testing.T) {
	for _, tt := range []struct {
		json  string
		bytes int64
		print string
	}{
		{`1048576`, 1 << 20, `"1MiB"`}, {`"512MiB"`, 512 << 20, `"512MiB"`}, {`"2 GiB"`, 2 << 30, `"2GiB"`},
		{`"64KiB"`, 64 << 10, `"64KiB"`}, {`"1000B"`, 1000, `1000`}, {`"1536MiB"`, 1536 << 20, `"1536MiB"`}, {`0`, 0, `0`},
	} {
		var b byteSize
		if err := json.Unmarshal([]byte(tt.json), &b); err != nil || int64(b) != tt.bytes {
			t.Errorf("%s reads as %d, %v; want %d", tt.json, b, err, tt.bytes)
			continue
		}
		out, err := json.Marshal(b)
		if err != nil || string(out) != tt.print {
			t.Errorf("%d prints as %s, %v; want %s", tt.bytes, out, err, tt.print)
		}
		var again byteSize
		if err := json.Unmarshal(out, &again); err != nil || again != b {
			t.Errorf("%s reads back as %d, %v", out, again, err)
		}
	}
	for _, bad := range []string{`"2GB"`, `"lots"`, `-1`, `1.5`, `"-3MiB"`, `"9999999999999GiB"`, `true`, `"MiB"`} {
		var b byteSize
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("%s reads as %d", bad, b)
		}
	}
}
