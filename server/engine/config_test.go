package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

func TestNewValidatesConfig(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docsapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	parts := func(context.Context, store.Project) (Parts, error) { return Parts{}, nil }
	valid := func() Config { return Config{Store: s, Owner: "engine-a", Parts: parts} }

	for _, tc := range []struct {
		field  string
		modify func(*Config)
	}{
		{"Store", func(c *Config) { c.Store = nil }},
		{"Owner", func(c *Config) { c.Owner = "" }},
		{"Parts", func(c *Config) { c.Parts = nil }},
		{"Concurrency", func(c *Config) { c.Concurrency = -1 }},
		{"LeaseFor", func(c *Config) { c.LeaseFor = -time.Second }},
		{"JobTimeout", func(c *Config) { c.JobTimeout = -time.Nanosecond }},
		{"MaxAttempts", func(c *Config) { c.MaxAttempts = -3 }},
		{"PollInterval", func(c *Config) { c.PollInterval = -time.Minute }},
		{"RetryDelay", func(c *Config) { c.RetryDelay = -time.Millisecond }},
		{"RetryDelay", func(c *Config) { c.RetryDelay = time.Nanosecond }},
	} {
		cfg := valid()
		tc.modify(&cfg)
		e, err := New(cfg)
		if err == nil || e != nil {
			t.Errorf("New with a bad %s = %v, %v; want an error and no engine", tc.field, e, err)
			continue
		}
		if !strings.Contains(err.Error(), "Config."+tc.field+" ") {
			t.Errorf("New with a bad %s: error %q does not name the field", tc.field, err)
		}
	}
}

func TestNewDefaults(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docsapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	parts := func(context.Context, store.Project) (Parts, error) { return Parts{}, nil }

	e, err := New(Config{Store: s, Owner: "engine-a", Parts: parts})
	if err != nil {
		t.Fatal(err)
	}
	c := e.cfg
	if c.Concurrency != DefaultConcurrency || c.LeaseFor != DefaultLeaseFor || c.JobTimeout != DefaultJobTimeout ||
		c.MaxAttempts != DefaultMaxAttempts || c.PollInterval != DefaultPollInterval || c.RetryDelay != DefaultRetryDelay ||
		c.Logger == nil || c.Now == nil {
		t.Errorf("zero Config got %+v; want every default set", c)
	}
	if cap(e.wake) != DefaultConcurrency {
		t.Errorf("wake-ups buffered = %d, want one per worker (%d)", cap(e.wake), DefaultConcurrency)
	}

	set := Config{Store: s, Owner: "engine-a", Parts: parts, Concurrency: 7, LeaseFor: time.Second, JobTimeout: 2 * time.Second,
		MaxAttempts: 9, PollInterval: 3 * time.Second, RetryDelay: 4 * time.Second}
	e, err = New(set)
	if err != nil {
		t.Fatal(err)
	}
	c = e.cfg
	if c.Concurrency != 7 || c.LeaseFor != time.Second || c.JobTimeout != 2*time.Second || c.MaxAttempts != 9 ||
		c.PollInterval != 3*time.Second || c.RetryDelay != 4*time.Second {
		t.Errorf("New changed the values it was given: %+v", c)
	}
}
