package llm

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/docsapi/docsapi-go/server/agent/internal/tools"
	"github.com/docsapi/docsapi-go/server/engine"
)

// The chat-completions wire format, reduced to the fields a tool loop needs.

type oaRequest struct {
	Model    string      `json:"model"`
	Messages []oaMessage `json:"messages"`
	Tools    []oaTool    `json:"tools"`
}

type oaMessage struct {
	Role string `json:"role"`
	// Content is null in an assistant message that only calls tools.
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON object encoded as a string.
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  any    `json:"parameters"`
}

type oaResponse struct {
	Choices []struct {
		Message struct {
			Content   *string      `json:"content"`
			Refusal   *string      `json:"refusal"`
			ToolCalls []oaToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

type openAIConversation struct {
	a      *Agent
	req    oaRequest
	header http.Header
	log    *slog.Logger
}

func newOpenAI(a *Agent, model, user string, log *slog.Logger) *openAIConversation {
	c := &openAIConversation{a: a, header: http.Header{}, log: log}
	if a.cfg.APIKey != "" {
		c.header.Set("Authorization", "Bearer "+a.cfg.APIKey)
	}
	c.req.Model = model
	c.req.Messages = []oaMessage{{Role: "system", Content: &a.system}, {Role: "user", Content: &user}}
	for _, d := range tools.Definitions() {
		c.req.Tools = append(c.req.Tools, oaTool{Type: "function",
			Function: oaFunction{Name: d.Name, Description: d.Description, Parameters: d.Schema}})
	}
	return c
}

func (c *openAIConversation) next(ctx context.Context) (reply, error) {
	var resp oaResponse
	if err := c.a.post(ctx, "/chat/completions", c.header, c.req, &resp, c.log); err != nil {
		return reply{}, err
	}
	if len(resp.Choices) == 0 {
		return reply{}, errors.New("llm agent: the provider's answer has no choices")
	}
	choice := resp.Choices[0]
	msg := choice.Message
	r := reply{stop: choice.FinishReason, inTok: resp.Usage.PromptTokens, outTok: resp.Usage.CompletionTokens}
	switch {
	case msg.Refusal != nil && *msg.Refusal != "":
		r.refusal = *msg.Refusal
		return r, nil
	case choice.FinishReason == "content_filter":
		return reply{}, engine.Permanent(errors.New("llm agent: the provider's content filter stopped the answer"))
	}
	// The assistant message goes back as sent, minus fields (reasoning,
	// annotations) that some compatible servers refuse in a request.
	back := oaMessage{Role: "assistant", Content: msg.Content, ToolCalls: msg.ToolCalls}
	for i := range back.ToolCalls {
		back.ToolCalls[i].Type = "function"
	}
	c.req.Messages = append(c.req.Messages, back)
	for _, tc := range msg.ToolCalls {
		r.calls = append(r.calls, call{ID: tc.ID, Name: tc.Function.Name, Input: []byte(tc.Function.Arguments)})
	}
	if len(r.calls) == 0 && choice.FinishReason == "length" {
		c.log.Warn("llm agent: the final answer was cut at the token limit")
	}
	return r, nil
}

// answer adds one "tool" message per call, in the calls' order. The format
// has no error flag, so a refused call's text starts with "Error:", which
// the system prompt explains.
func (c *openAIConversation) answer(calls []call, results []tools.Result) {
	for i, cl := range calls {
		text := results[i].Text
		if results[i].IsError {
			text = "Error: " + text
		}
		c.req.Messages = append(c.req.Messages, oaMessage{Role: "tool", ToolCallID: cl.ID, Content: &text})
	}
}
