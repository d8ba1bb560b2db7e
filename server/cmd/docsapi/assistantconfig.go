package main

import (
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/assistant"
	"github.com/docsapi/docsapi-go/server/store"
)

// The assistant's configuration: each project's model (a project's
// "assistant", or else its agent's settings when its agent is kind llm),
// and the bounds every project's answers share (the top-level
// "assistant").

// assistantConfig is the top-level "assistant": the bounds of POST
// /discovery/v2/assistant/{domain}/message (server.AssistantConfig); every
// field absent or 0 takes its default.
type assistantConfig struct {
	// PerAddress is one client address's budget of questions.
	PerAddress            rateLimit `json:"perAddress,omitzero"`
	MaxBodyBytes          int64     `json:"maxBodyBytes,omitempty"`
	MaxQuestionCharacters int       `json:"maxQuestionCharacters,omitempty"`
	MaxContextItems       int       `json:"maxContextItems,omitempty"`
	MaxContextCharacters  int       `json:"maxContextCharacters,omitempty"`
	MaxThreadExchanges    int       `json:"maxThreadExchanges,omitempty"`
	MaxExchangesPerDay    int       `json:"maxExchangesPerDay,omitempty"`
	// DailyTokens is a project's budget of model tokens a UTC day, unless
	// the project's own "assistant" names one.
	DailyTokens     int64 `json:"dailyTokens,omitempty"`
	MaxAnswerTokens int   `json:"maxAnswerTokens,omitempty"`
}

// projectAssistantConfig is a project's "assistant": the model that
// answers its readers, through the llm clients. Absent, a project whose
// agent is kind llm answers with its agent's provider, model and key;
// any other has no assistant.
type projectAssistantConfig struct {
	Provider         string `json:"provider"` // openai or anthropic
	BaseURL          string `json:"baseURL,omitempty"`
	Model            string `json:"model"`
	APIKeyEnv        string `json:"apiKeyEnv,omitempty"`
	APIKeyFile       string `json:"apiKeyFile,omitempty"`
	AnthropicVersion string `json:"anthropicVersion,omitempty"`
	// MaxTokens bounds one answer; DailyTokens the project's tokens a UTC
	// day. 0: the top-level assistant's.
	MaxTokens   int   `json:"maxTokens,omitempty"`
	DailyTokens int64 `json:"dailyTokens,omitempty"`
}

// serveAssistant checks the top-level "assistant" and returns the
// server's bounds, defaults filled in.
func serveAssistant(c assistantConfig) (server.AssistantConfig, error) {
	var out server.AssistantConfig
	if c.PerAddress.Requests != nil || c.PerAddress.Per != 0 {
		out.AskPerAddress = server.Limit(assistant.DefaultPerAddress())
		if c.PerAddress.Requests != nil {
			out.AskPerAddress.Requests = *c.PerAddress.Requests
		}
		if c.PerAddress.Per != 0 {
			out.AskPerAddress.Per = time.Duration(c.PerAddress.Per)
		}
		if out.AskPerAddress.Requests < 1 || out.AskPerAddress.Per <= 0 {
			return out, usagef("assistant.perAddress needs requests of 1 or more and a positive per, got %d per %s", out.AskPerAddress.Requests, out.AskPerAddress.Per)
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"maxBodyBytes", c.MaxBodyBytes},
		{"maxQuestionCharacters", int64(c.MaxQuestionCharacters)},
		{"maxContextItems", int64(c.MaxContextItems)},
		{"maxContextCharacters", int64(c.MaxContextCharacters)},
		{"maxThreadExchanges", int64(c.MaxThreadExchanges)},
		{"maxExchangesPerDay", int64(c.MaxExchangesPerDay)},
		{"dailyTokens", c.DailyTokens},
		{"maxAnswerTokens", int64(c.MaxAnswerTokens)},
	} {
		if f.v < 0 {
			return out, usagef("assistant.%s must be 0 (the default) or more, got %d", f.name, f.v)
		}
	}
	out.MaxAskBodyBytes, out.MaxQuestionLength = c.MaxBodyBytes, c.MaxQuestionCharacters
	out.MaxContextItems, out.MaxContextLength = c.MaxContextItems, c.MaxContextCharacters
	out.MaxThreadExchanges, out.MaxExchangesPerDay = c.MaxThreadExchanges, c.MaxExchangesPerDay
	out.DailyTokens, out.MaxAnswerTokens = c.DailyTokens, c.MaxAnswerTokens
	// The gate's own fields take their defaults in server.New, as they did
	// before the answers' bounds were here.
	return out, nil
}

// resolveAssistantModel returns project p's assistant model (model is the
// project's, resolved): from its "assistant", or from its agent when that
// is kind llm; none (a zero Chat) otherwise. Errors name the field.
func resolveAssistantModel(where string, p projectConfig, model string, getenv func(string) string) (server.AssistantModel, []string, error) {
	a := p.Assistant
	if a == nil {
		if p.Agent.Kind != "llm" {
			return server.AssistantModel{}, nil, nil
		}
		// The agent's settings, already checked as an agent's.
		a = &projectAssistantConfig{
			Provider: p.Agent.Provider, BaseURL: p.Agent.BaseURL, Model: model,
			APIKeyEnv: p.Agent.APIKeyEnv, APIKeyFile: p.Agent.APIKeyFile, AnthropicVersion: p.Agent.AnthropicVersion,
		}
		where += ".agent"
	} else {
		where += ".assistant"
		switch {
		case a.Provider == "":
			return server.AssistantModel{}, nil, fmt.Errorf("%s: provider is required: openai or anthropic", where)
		case a.Provider != string(llm.OpenAI) && a.Provider != string(llm.Anthropic):
			return server.AssistantModel{}, nil, fmt.Errorf("%s: unknown provider %q: use openai or anthropic", where, a.Provider)
		case a.Model == "":
			return server.AssistantModel{}, nil, fmt.Errorf("%s: model is required: the model that answers readers", where)
		case a.MaxTokens < 0:
			return server.AssistantModel{}, nil, fmt.Errorf("%s: maxTokens must be 0 (the default) or more, got %d", where, a.MaxTokens)
		case a.DailyTokens < 0:
			return server.AssistantModel{}, nil, fmt.Errorf("%s: dailyTokens must be 0 (the default) or more, got %d", where, a.DailyTokens)
		}
	}
	var key string
	var warns []string
	if a.APIKeyEnv != "" || a.APIKeyFile != "" {
		k, warn, err := readSecret(where, "apiKey", a.APIKeyEnv, a.APIKeyFile, getenv)
		if err != nil {
			return server.AssistantModel{}, nil, err
		}
		// The agent's key was warned about as the agent's.
		if key = k; warn != "" && p.Assistant != nil {
			warns = append(warns, warn)
		}
	}
	agent, err := llm.New(llm.Config{Provider: llm.Provider(a.Provider), BaseURL: a.BaseURL, Model: a.Model, APIKey: key, AnthropicVersion: a.AnthropicVersion})
	if err != nil {
		return server.AssistantModel{}, nil, fmt.Errorf("%s: %w", where, err)
	}
	return server.AssistantModel{Chat: agent, Model: a.Model, MaxTokens: a.MaxTokens, DailyTokens: a.DailyTokens}, warns, nil
}

// assistantModels is Config.AssistantModel over the resolved projects.
func assistantModels(models map[string]server.AssistantModel) func(store.Project) (server.AssistantModel, error) {
	return func(p store.Project) (server.AssistantModel, error) {
		m, ok := models[p.ID]
		if !ok || m.Chat == nil {
			return server.AssistantModel{}, assistant.ErrNoModel
		}
		return m, nil
	}
}
