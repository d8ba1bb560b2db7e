package main

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/docsapi/docsapi-go/server/assistant"
	"github.com/docsapi/docsapi-go/server/store"
)

// The assistant's settings are checked as the agent's are: each error
// names the field.
func TestAssistantConfigErrors(t *testing.T) {
	project := func(assistant string) string {
		return `{"projects": [{"id": "p", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}, "assistant": ` + assistant + `}]}`
	}
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"no provider", project(`{"model": "m"}`), []string{`projects[0] ("p").assistant: provider is required: openai or anthropic`}},
		{"unknown provider", project(`{"provider": "gemini", "model": "m"}`), []string{`projects[0] ("p").assistant: unknown provider "gemini"`}},
		{"no model", project(`{"provider": "openai"}`), []string{`projects[0] ("p").assistant: model is required`}},
		{"negative max tokens", project(`{"provider": "openai", "model": "m", "maxTokens": -1}`), []string{`projects[0] ("p").assistant: maxTokens must be 0`}},
		{"negative daily tokens", project(`{"provider": "openai", "model": "m", "dailyTokens": -1}`), []string{`projects[0] ("p").assistant: dailyTokens must be 0`}},
		{"key env not set", project(`{"provider": "openai", "model": "m", "apiKeyEnv": "NOT_SET_KEY"}`), []string{`projects[0] ("p").assistant`, "NOT_SET_KEY, which is not set"}},
		{"literal key", project(`{"provider": "openai", "model": "m", "apiKey": "sk-LITERALSECRET"}`), []string{`projects[0].assistant: field "apiKey"`}},
		{"unknown field", project(`{"provider": "openai", "modle": "m"}`), []string{`projects[0].assistant: unknown field "modle"`}},
		{"bad base URL", project(`{"provider": "openai", "model": "m", "baseURL": "ftp://x"}`), []string{`projects[0] ("p").assistant: `}},
		{"negative cap", `{"assistant": {"maxThreadExchanges": -2}}`, []string{"assistant.maxThreadExchanges must be 0 (the default) or more, got -2"}},
		{"zero per-address requests", `{"assistant": {"perAddress": {"requests": 0}}}`, []string{"assistant.perAddress needs requests of 1 or more"}},
		{"unknown global field", `{"assistant": {"dailyToken": 5}}`, []string{`assistant: unknown field "dailyToken"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := configFile(t, tc.config)
			r := runCLI(t, nil, "", "serve", "--config", path, "--data", t.TempDir(), "--print-config")
			r.expect(t, exitUsage, tc.want...)
		})
	}
}

// A project's assistant is its "assistant", or else its llm agent's
// settings; a command agent's project without one has none.
func TestAssistantModels(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "assistant.key"), "sk-FROMFILE\n")
	path := writeFile(t, filepath.Join(dir, "docsapi.json"), `{"projects": [
	  {"id": "own", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"},
	   "assistant": {"provider": "anthropic", "model": "claude-haiku", "apiKeyFile": "assistant.key", "maxTokens": 300, "dailyTokens": 5000}},
	  {"id": "agent", "repository": "r", "model": "gpt-x", "host": {"kind": "push-only"}, "agent": {"kind": "llm", "provider": "openai", "apiKeyEnv": "LLM_KEY"}},
	  {"id": "none", "repository": "r", "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh"}}
	]}`)
	cfg, err := loadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := resolveProjects(cfg, func(k string) string { return map[string]string{"LLM_KEY": "sk-ENV"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	models := assistantModels(got.assistant)
	own, err := models(store.Project{ID: "own"})
	if err != nil || own.Chat == nil || own.Model != "claude-haiku" || own.MaxTokens != 300 || own.DailyTokens != 5000 {
		t.Errorf("own: %+v, %v", own, err)
	}
	agent, err := models(store.Project{ID: "agent"})
	if err != nil || agent.Chat == nil || agent.Model != "gpt-x" || agent.MaxTokens != 0 || agent.DailyTokens != 0 {
		t.Errorf("agent's: %+v, %v", agent, err)
	}
	if _, err := models(store.Project{ID: "none"}); !errors.Is(err, assistant.ErrNoModel) {
		t.Errorf("none: %v, want ErrNoModel", err)
	}
	if len(got.warnings) != 0 {
		t.Errorf("warnings %q", got.warnings)
	}
}

// The global bounds reach the server's configuration.
func TestServeAssistantBounds(t *testing.T) {
	n := 3
	c, err := serveAssistant(assistantConfig{PerAddress: rateLimit{Requests: &n}, MaxThreadExchanges: 7, DailyTokens: 99, MaxBodyBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if c.AskPerAddress.Requests != 3 || c.AskPerAddress.Per != assistant.DefaultPerAddress().Per || c.MaxThreadExchanges != 7 || c.DailyTokens != 99 || c.MaxAskBodyBytes != 4096 {
		t.Errorf("%+v", c)
	}
}
