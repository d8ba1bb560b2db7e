package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/sqlite"
)

// Every size and duration of Config takes its default at zero and refuses
// a negative value, naming the field as a program sets it: a negative
// bound would otherwise refuse every request or never expire a session.
func TestNewRefusesNegativeSizes(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tc := range []struct {
		field string
		set   func(*server.Config)
	}{
		{"MaxPromptLength", func(c *server.Config) { c.MaxPromptLength = -1 }},
		{"MaxJobPrompts", func(c *server.Config) { c.MaxJobPrompts = -1 }},
		{"MaxJobPromptLength", func(c *server.Config) { c.MaxJobPromptLength = -1 }},
		{"MaxBodyBytes", func(c *server.Config) { c.MaxBodyBytes = -1 }},
		{"IngestMaxCommit", func(c *server.Config) { c.IngestMaxCommit = -1 }},
		{"IngestMaxQueued", func(c *server.Config) { c.IngestMaxQueued = -1 }},
		{"Site.MaxAddresses", func(c *server.Config) { c.Site.MaxAddresses = -1 }},
		{"Site.MaxFeedbackPerDay", func(c *server.Config) { c.Site.MaxFeedbackPerDay = -1 }},
		{"Site.MaxQueriesPerDay", func(c *server.Config) { c.Site.MaxQueriesPerDay = -1 }},
		{"Site.MaxBodyBytes", func(c *server.Config) { c.Site.MaxBodyBytes = -1 }},
		{"Site.MaxQueriesPerNetwork", func(c *server.Config) { c.Site.MaxQueriesPerNetwork = -1 }},
		{"Dashboard.MaxAge", func(c *server.Config) { c.Dashboard.MaxAge = -1 }},
		{"Dashboard.IdleTimeout", func(c *server.Config) { c.Dashboard.IdleTimeout = -1 }},
	} {
		cfg := server.Config{Store: st}
		tc.set(&cfg)
		want := "Config." + tc.field + " must not be negative"
		if _, err := server.New(cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with %s -1: %v, want an error saying %q", tc.field, err, want)
		}
	}
	if _, err := server.New(server.Config{Store: st}); err != nil {
		t.Errorf("New with every size zero (the defaults): %v", err)
	}
}
