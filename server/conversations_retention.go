package server

import (
	"context"
	"log/slog"
	"time"
)

// DefaultAssistantRetention is how long the assistant's conversations are
// kept unless Config.AssistantRetention says otherwise: 90 days, long
// enough to see what readers keep asking over a release or two, short
// enough that readers' questions are not kept for good by default.
const DefaultAssistantRetention = 90 * 24 * time.Hour

// assistantRetention is Config.AssistantRetention resolved: the default
// for zero, and 0 for "keep forever".
func (s *Server) assistantRetention() time.Duration {
	switch r := s.cfg.AssistantRetention; {
	case r == 0:
		return DefaultAssistantRetention
	case r < 0:
		return 0
	default:
		return r
	}
}

// SweepConversations deletes the assistant's conversations that are past
// the retention (Config.AssistantRetention) at Config.Now: every exchange
// asked before then, the threads left with none, and the days of token
// counts before its day. It returns how many exchanges it deleted; with
// the retention off, it deletes nothing. Servers sharing a Store may each
// sweep: a sweep deletes only what is past the retention, so running it
// twice deletes nothing more.
func (s *Server) SweepConversations(ctx context.Context) (int, error) {
	r := s.assistantRetention()
	if r == 0 {
		return 0, nil
	}
	return s.cfg.Store.DeleteConversationsBefore(ctx, s.cfg.Now().Add(-r))
}

// RunConversationSweeps calls SweepConversations at once, then every
// interval (positive), until ctx ends; it returns then. A sweep that fails
// is logged and tried again at the next one. docsapi serve runs it.
func (s *Server) RunConversationSweeps(ctx context.Context, every time.Duration) {
	if s.assistantRetention() == 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.SweepConversations(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.cfg.Logger.Error("server: deleting assistant conversations past their retention", slog.Any("error", err))
		case n > 0:
			s.cfg.Logger.Info("server: deleted assistant conversations past their retention", slog.Int("exchanges", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
