package llm_test

import (
	"context"
	"log"
	"os"

	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/engine"
)

// The Anthropic Messages API; the caller reads the key, the library never
// does.
func ExampleNew_anthropic() {
	agent, err := llm.New(llm.Config{
		Provider: llm.Anthropic,
		Model:    "claude-sonnet-4-5", // used when the task names no model
		APIKey:   os.Getenv("ANTHROPIC_API_KEY"),
		MaxTurns: 40,
	})
	if err != nil {
		log.Fatal(err)
	}
	err = agent.Run(context.Background(), engine.Task{
		JobID: "job_123", ProjectID: "docs", Dir: "/path/to/workspace",
		Prompts: []string{"Document the new --verbose flag."},
		Model:   "claude-opus-4-1", // the job's model wins
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Any OpenAI-compatible server, here a local one that needs no key.
func ExampleNew_openAICompatible() {
	agent, err := llm.New(llm.Config{
		Provider:     llm.OpenAI,
		BaseURL:      "http://localhost:11434/v1",
		Model:        "qwen2.5-coder:32b",
		Instructions: "Pages live under docs/; list every new page in docs.json.",
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = agent
}

// A streamed answer without tools, each delta written as it arrives.
func ExampleAgent_Chat() {
	agent, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "gpt-4.1-mini", APIKey: os.Getenv("OPENAI_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	stream, err := agent.Chat(context.Background(), llm.ChatRequest{
		System:   "Answer from the documentation excerpts only.",
		Messages: []llm.ChatMessage{{Role: "user", Content: "How do I rotate a key?"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Close()
	for stream.Next() {
		os.Stdout.WriteString(stream.Text())
	}
	if err := stream.Err(); err != nil {
		log.Fatal(err) // the answer is incomplete
	}
	log.Printf("stop: %s, tokens: %+v", stream.StopReason(), stream.Usage())
}
