package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/docsapi/docsapi-go/server/agent/internal/tools"
)

// The Messages API wire format, reduced to the fields a tool loop needs.

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools"`
}

type anMessage struct {
	Role string `json:"role"`
	// Content is a string for the prompt, the content blocks exactly as
	// received for an assistant turn, and tool_result blocks after it.
	Content any `json:"content"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anToolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

type anResponse struct {
	Content    json.RawMessage `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

type anBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anthropicConversation struct {
	a      *Agent
	req    anRequest
	header http.Header
	log    *slog.Logger
}

func newAnthropic(a *Agent, model, user string, log *slog.Logger) *anthropicConversation {
	c := &anthropicConversation{a: a, header: http.Header{}, log: log}
	if a.cfg.APIKey != "" {
		c.header.Set("X-Api-Key", a.cfg.APIKey)
	}
	c.header.Set("Anthropic-Version", a.cfg.AnthropicVersion)
	c.req = anRequest{Model: model, MaxTokens: a.cfg.MaxTokens, System: a.system,
		Messages: []anMessage{{Role: "user", Content: user}}}
	for _, d := range tools.Definitions() {
		c.req.Tools = append(c.req.Tools, anTool{Name: d.Name, Description: d.Description, InputSchema: d.Schema})
	}
	return c
}

func (c *anthropicConversation) next(ctx context.Context) (reply, error) {
	var resp anResponse
	if err := c.a.post(ctx, "/v1/messages", c.header, c.req, &resp, c.log); err != nil {
		return reply{}, err
	}
	var blocks []anBlock
	if len(resp.Content) > 0 && string(resp.Content) != "null" {
		if err := json.Unmarshal(resp.Content, &blocks); err != nil {
			return reply{}, fmt.Errorf("llm agent: reading the provider's answer: %w", err)
		}
	}
	r := reply{stop: resp.StopReason, inTok: resp.Usage.InputTokens, outTok: resp.Usage.OutputTokens}
	if resp.StopReason == "refusal" {
		var text []string
		for _, b := range blocks {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				text = append(text, strings.TrimSpace(b.Text))
			}
		}
		r.refusal = strings.Join(text, " ")
		if r.refusal == "" {
			r.refusal = "stop_reason refusal, without an explanation"
		}
		return r, nil
	}
	for _, b := range blocks {
		if b.Type == "tool_use" {
			r.calls = append(r.calls, call{ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	if len(r.calls) > 0 {
		// The content goes back byte for byte: the API expects its own
		// blocks (tool_use ids, and signed thinking blocks if any) in the
		// assistant turn that the results answer.
		c.req.Messages = append(c.req.Messages, anMessage{Role: "assistant", Content: resp.Content})
	} else if resp.StopReason == "max_tokens" {
		c.log.Warn("llm agent: the final answer was cut at the token limit")
	}
	return r, nil
}

// answer adds one user message holding a tool_result block per call, in
// the calls' order, as the API requires.
func (c *anthropicConversation) answer(calls []call, results []tools.Result) {
	blocks := make([]anToolResult, len(calls))
	for i, cl := range calls {
		blocks[i] = anToolResult{Type: "tool_result", ToolUseID: cl.ID, Content: results[i].Text, IsError: results[i].IsError}
	}
	c.req.Messages = append(c.req.Messages, anMessage{Role: "user", Content: blocks})
}
