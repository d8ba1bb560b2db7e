package command_test

import (
	"context"
	"log"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/command"
	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/engine"
)

// Claude Code as the agent: the prompt arrives on standard input, the
// project's model through {model}, and the key through an allow-listed
// variable of the server's environment. It runs in the sandbox, which
// shows it Node.js where it is installed and lets it reach its API only,
// through the proxy that the server's own binary bridges into the sandbox.
func ExampleNew() {
	agent, err := command.New(command.Config{
		Command:        "claude",
		Args:           []string{"-p", "--model", "{model}", "--permission-mode", "acceptEdits"},
		PromptVia:      command.PromptStdin,
		Timeout:        15 * time.Minute,
		MaxOutputBytes: 64 << 10,
		PassEnv:        []string{"ANTHROPIC_API_KEY"},
		Sandbox: sandbox.Config{
			ReadOnly:   []string{"/opt/node"},
			AllowHosts: []string{"api.anthropic.com"},
			Bridge:     []string{"/usr/local/bin/docsapi", "sandbox-bridge"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	err = agent.Run(context.Background(), engine.Task{
		JobID: "job_123", ProjectID: "docs", Dir: "/path/to/workspace",
		Prompts: []string{"Document the new --verbose flag."}, Model: "claude-sonnet-4-5",
	})
	if err != nil {
		log.Fatal(err)
	}
}
