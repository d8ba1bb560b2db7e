package runner_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/runner"
)

func TestAgentModelNamesWhatRunsTheJobs(t *testing.T) {
	tests := []struct {
		name  string
		agent runner.Agent
		want  string
	}{
		{"llm: its model", runner.Agent{Kind: runner.LLM, LLM: llm.Config{Model: "qwen3-coder"}}, "qwen3-coder"},
		{"llm without a model: the project must name one", runner.Agent{Kind: runner.LLM}, ""},
		{"command with a model", runner.Agent{Kind: runner.Command, Command: command.Config{Command: "claude", Model: "claude-sonnet-4-5"}}, "claude-sonnet-4-5"},
		{"command in PATH", runner.Agent{Kind: runner.Command, Command: command.Config{Command: "claude"}}, "claude"},
		{"command by path", runner.Agent{Kind: runner.Command, Command: command.Config{Command: "/opt/agents/bin/codex"}}, "codex"},
		{"unknown kind", runner.Agent{Kind: "magic", Command: command.Config{Command: "sh"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.agent.Model(); got != tt.want {
				t.Errorf("Model() = %q, want %q", got, tt.want)
			}
		})
	}
}
