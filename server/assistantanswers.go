package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/docsapi/docsapi-go/server/assistant"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
)

// The assistant's answers, POST /discovery/v2/assistant/{domain}/message
// (package assistant), behind the /discovery gate.

// answerDefaults checks the answers' bounds of c and sets the zero ones
// to their defaults.
func (c *AssistantConfig) answerDefaults() error {
	if c.AskPerAddress == (Limit{}) {
		c.AskPerAddress = Limit(assistant.DefaultPerAddress())
	}
	if c.AskPerAddress.Requests <= 0 || c.AskPerAddress.Per <= 0 {
		return fmt.Errorf("server: Config.Assistant.AskPerAddress needs positive Requests and Per, got %d per %s", c.AskPerAddress.Requests, c.AskPerAddress.Per)
	}
	return errors.Join(
		orDefault("Assistant.MaxAskBodyBytes", &c.MaxAskBodyBytes, assistant.DefaultMaxBodyBytes),
		orDefault("Assistant.MaxQuestionLength", &c.MaxQuestionLength, assistant.DefaultMaxQuestionChars),
		orDefault("Assistant.MaxContextItems", &c.MaxContextItems, assistant.DefaultMaxContextItems),
		orDefault("Assistant.MaxContextLength", &c.MaxContextLength, assistant.DefaultMaxContextChars),
		orDefault("Assistant.MaxThreadExchanges", &c.MaxThreadExchanges, assistant.DefaultThreadCap),
		orDefault("Assistant.MaxExchangesPerDay", &c.MaxExchangesPerDay, assistant.DefaultDailyCap),
		orDefault("Assistant.DailyTokens", &c.DailyTokens, assistant.DefaultDailyTokens),
		orDefault("Assistant.MaxAnswerTokens", &c.MaxAnswerTokens, assistant.DefaultMaxAnswerTokens),
	)
}

// newAnswers returns the answers' handler of cfg, a resolved Config.
func newAnswers(cfg Config, s *Server) *assistant.Handler {
	a := cfg.Assistant
	return assistant.New(assistant.Config{
		Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now,
		Addr:   func(r *http.Request) netip.Addr { return s.proxies.Addr(r) },
		Models: cfg.AssistantModel,
		Limits: assistant.Limits{
			PerAddress: ratelimit.Limit(a.AskPerAddress), MaxAddresses: a.MaxAddresses,
			MaxBodyBytes: a.MaxAskBodyBytes, MaxQuestionChars: a.MaxQuestionLength,
			MaxContextItems: a.MaxContextItems, MaxContextChars: a.MaxContextLength,
			ThreadCap: a.MaxThreadExchanges, DailyCap: a.MaxExchangesPerDay,
			DailyTokens: a.DailyTokens, MaxAnswerTokens: a.MaxAnswerTokens,
		},
	})
}

// assistantRoutes adds the answers' endpoint and its preflight.
func (s *Server) assistantRoutes(mux *routeMux) {
	observe := func(endpoint string) func(string) {
		if s.cfg.OnPublicRequest == nil {
			return nil
		}
		return func(outcome string) { s.cfg.OnPublicRequest(PublicRequestInfo{Endpoint: endpoint, Outcome: outcome}) }
	}
	mux.Handle("POST /discovery/v2/assistant/{domain}/message", s.assistant.Serve(s.answers.Message, observe(public.DiscoveryAssistant)))
	mux.Handle("OPTIONS /discovery/v2/assistant/{domain}/message", s.assistant.Preflight(observe(public.DiscoveryPreflight)))
}

// AssistantModel is what Config.AssistantModel returns: a project's chat
// model and its bounds (see assistant.ProjectModel).
type AssistantModel = assistant.ProjectModel
