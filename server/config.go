package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"reflect"
	"time"

	"github.com/docsapi/docsapi-go/server/ingest"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// Defaults of Config.
const (
	DefaultKeyPrefix       = "mint_"
	DefaultMaxPromptLength = 32000   // characters
	DefaultMaxBodyBytes    = 1 << 20 // bytes
	// DefaultMaxJobPrompts caps a job's prompts, its first included. A
	// docs job takes a few follow-ups; fifty is far past a conversation
	// and far below the history an agent would have to read at every run
	// if it were unbounded.
	DefaultMaxJobPrompts = 50
	// DefaultMaxJobPromptLength caps the characters of a job's prompts
	// together: four prompts of the longest length, or fifty of 2,560.
	// Every run hands the whole history to the agent, a model's context
	// included, so it stays a small part of what a model reads.
	DefaultMaxJobPromptLength = 4 * DefaultMaxPromptLength
	// DefaultKeyCacheTTL is how long a Server trusts a key it verified,
	// and the project it read, without asking the Store again
	// (Config.KeyCacheTTL).
	DefaultKeyCacheTTL = time.Second
)

// Defaults of Config's ingestion fields (see package ingest).
const (
	// DefaultIngestWindow is how long the ingestion endpoint holds a
	// request's views, at most, for requests arriving with it.
	DefaultIngestWindow = ingest.DefaultWindow
	// DefaultIngestMaxCommit bounds the counts of one shared commit.
	DefaultIngestMaxCommit = ingest.DefaultMaxCommit
	// DefaultIngestMaxQueued bounds the counts waiting for a commit.
	DefaultIngestMaxQueued = ingest.DefaultMaxQueued
)

// Config configures a Server. Store is required; the zero value of every
// other field picks its default.
type Config struct {
	// Store keeps projects, keys, jobs and page views.
	Store store.Store
	// Logger receives one line per request and every internal error.
	// The default discards them.
	Logger *slog.Logger
	// KeyPrefix starts every key the server generates. "mint_" by default,
	// the hosted service's admin key prefix, so tools that check the prefix
	// accept self-hosted keys too.
	KeyPrefix string
	// MaxPromptLength bounds a prompt, in characters.
	MaxPromptLength int
	// MaxBodyBytes bounds a request body; a larger one answers 413.
	MaxBodyBytes int64
	// MaxJobPrompts caps the prompts a job holds, its first included: a
	// follow-up past it is answered 400 naming the cap, and not stored.
	// DefaultMaxJobPrompts by default.
	MaxJobPrompts int
	// MaxJobPromptLength caps the characters of a job's prompts together:
	// a follow-up that would take them past it is answered 400 naming the
	// cap, and not stored. DefaultMaxJobPromptLength by default; at least
	// MaxPromptLength, so that a job of one prompt always fits.
	MaxJobPromptLength int
	// RateLimits bounds requests per API key. Off by default (the zero
	// value); DefaultRateLimits are those `docsapi serve` applies.
	RateLimits RateLimits
	// Now tells the time; tests inject a clock. Default time.Now.
	Now func() time.Time
	// KeyCacheTTL is how long a verified API key, and a project it
	// addresses, are trusted without reading the Store again, so that a
	// request costs no store read for them. A key revoked through another
	// Server sharing the Store, or by the command line, keeps working here
	// for at most this long (through this Server: not at all); its expiry
	// time is checked on every request. Default DefaultKeyCacheTTL;
	// negative turns the cache off.
	KeyCacheTTL time.Duration
	// PageViews, if set, lends its Classifier to the ingestion endpoint, so
	// that ingested views are classified as its middleware classifies
	// requests. Ingested views never go through it: the endpoint answers
	// 202 only once they are committed to the Store.
	PageViews *pageviews.Recorder
	// IngestWindow bounds how long the ingestion endpoint holds a
	// request's views for others arriving at the same time, so that they
	// share one commit (see DefaultIngestWindow); negative: no wait, only
	// requests that queued during the previous commit share the next.
	// At most one second.
	IngestWindow time.Duration
	// IngestMaxCommit bounds the counts (one per path and hour of a
	// request) written by one shared commit. A request is never split: a
	// larger one is committed alone. DefaultIngestMaxCommit by default.
	IngestMaxCommit int
	// IngestMaxQueued bounds the counts waiting for a commit; a request
	// that finds no room is answered 503 with Retry-After (a request
	// always fits an empty queue). DefaultIngestMaxQueued by default.
	IngestMaxQueued int
	// TrustedProxies are the networks of the reverse proxies in front of
	// the server. A request whose connection comes from one of them is
	// taken to come from the client its X-Forwarded-For or Forwarded
	// header names (the rightmost address no trusted proxy has); other
	// requests' headers are ignored, so a client cannot choose the address
	// that per-address limits and visitor counts see. Empty: none.
	TrustedProxies []netip.Prefix
	// Site bounds the public site endpoints, which record readers'
	// feedback and searches from the browser (see SiteConfig); its zero
	// value is the defaults, not "no limit".
	Site SiteConfig
	// Assistant bounds the /discovery endpoints, which take assistant
	// keys (see AssistantConfig); its zero value is the defaults.
	Assistant AssistantConfig
	// AssistantModel, if set, returns a project's assistant model, which
	// answers its readers' questions (POST
	// /discovery/v2/assistant/{domain}/message) through the llm clients.
	// A project for which it returns assistant.ErrNoModel or no Chat, or
	// every project when it is nil, has no assistant: 503 naming that.
	AssistantModel func(store.Project) (AssistantModel, error)
	// Secret seals what clients carry back: the dashboard's session
	// cookies and the cursors of the paginated exports and lists. It is
	// SecretBytes random bytes, each use getting a key of its own derived
	// from it. Keep it out of the Store: it is what a copy of the
	// database lacks, so that a backup or a dump cannot seal a session.
	// Every Server sharing a Store must have the same, or each refuses the
	// others' sessions and cursors. Replacing it ends every session and
	// invalidates every cursor, and changes nothing else.
	//
	// Without it, New draws a random secret for this Server alone: its
	// sessions and cursors work until it ends, and no other Server (a
	// replica, or this program after a restart) accepts them. docsapi
	// serve reads it from a file (see its help).
	Secret []byte
	// Dashboard configures the operators' web pages under /dashboard/
	// (see DashboardConfig); off unless Enabled. Its sessions are sealed
	// with a key derived from Secret, and signing out is recorded in the
	// Store, so replicas share both.
	Dashboard DashboardConfig

	// Runs, if set, says whether this server can run a project's jobs
	// (docsapi serve: whether its configuration has a runner for the
	// project). A job created, or followed up, for a project it refuses is
	// answered 503 with its error and not stored, rather than accepted
	// only to fail when an engine claims it.
	Runs func(ctx context.Context, project store.Project) error

	// Jobs, if set, hears of queued and archived jobs, so that a job
	// engine in this process starts them at once and stops archived runs
	// (an *engine.Engine does). Without it, engines find jobs by polling.
	Jobs JobEvents

	// DocsUpdates, if set, hears of documentation updates queued through
	// the API (POST /v1/project/update/{projectId}), so that an updater in
	// this process starts them at once (a *docsupdate.Updater does).
	// Without it, updaters sharing the Store find them by polling; with
	// none anywhere, updates stay queued.
	DocsUpdates DocsUpdateEvents

	// OnRequest, if set, is told of every request once it is answered
	// (server/metrics counts them with it). It runs on the request's
	// goroutine, after the response, so it must return quickly.
	OnRequest func(RequestInfo)
	// OnIngestCommit, if set, is told of every commit of the views sent
	// to the ingestion endpoint, before the commit's requests are
	// answered. It runs on the committing goroutine, which the requests
	// and the next commit wait for, so it must return quickly.
	OnIngestCommit func(IngestCommitInfo)
	// OnSiteLimit, if set, is told of every submission to a public site
	// endpoint that met a day's cap or a client's share of it (see
	// SiteLimitInfo). It runs on the request's goroutine, so it must
	// return quickly.
	OnSiteLimit func(SiteLimitInfo)
	// OnPublicRequest, if set, is told what came of every request to a
	// site endpoint and to the ingestion endpoint (see
	// PublicRequestInfo). It runs on the request's goroutine, so it must
	// return quickly.
	OnPublicRequest func(PublicRequestInfo)
	// OnSignIn, if set, is told of every attempt to sign in to the
	// dashboard (see SignInInfo). It runs on the request's goroutine, so
	// it must return quickly.
	OnSignIn func(SignInInfo)
}

// JobEvents is told about job changes made through the API.
type JobEvents interface {
	// JobQueued says a job was created or given a follow-up.
	JobQueued()
	// JobArchived says a job was archived.
	JobArchived(jobID string)
}

// resolve checks c and sets the defaults of its zero fields, as New
// takes it.
func (c *Config) resolve() error {
	if c.Store == nil {
		return errors.New("server: Config.Store is nil")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if !validKeyPrefix(c.KeyPrefix) {
		return fmt.Errorf("server: Config.KeyPrefix %q must be 1 to 16 letters or digits followed by an underscore", c.KeyPrefix)
	}
	if err := errors.Join(
		orDefault("MaxPromptLength", &c.MaxPromptLength, DefaultMaxPromptLength),
		orDefault("MaxJobPrompts", &c.MaxJobPrompts, DefaultMaxJobPrompts),
		orDefault("MaxBodyBytes", &c.MaxBodyBytes, DefaultMaxBodyBytes),
	); err != nil {
		return err
	}
	// The history's default follows a raised prompt length, set above.
	if err := orDefault("MaxJobPromptLength", &c.MaxJobPromptLength, max(DefaultMaxJobPromptLength, c.MaxPromptLength)); err != nil {
		return err
	}
	if c.MaxJobPromptLength < c.MaxPromptLength {
		return fmt.Errorf("server: Config.MaxJobPromptLength (%d characters) is below Config.MaxPromptLength (%d): a job could be created with a prompt longer than its whole history may be", c.MaxJobPromptLength, c.MaxPromptLength)
	}
	if err := c.RateLimits.validate(); err != nil {
		return err
	}
	if v := reflect.ValueOf(c.Jobs); c.Jobs != nil && v.Kind() == reflect.Pointer && v.IsNil() {
		// A nil *engine.Engine in the interface is not nil, and would
		// panic on the first job; refuse it here, where it is plain.
		return errors.New("server: Config.Jobs holds a nil pointer")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if err := resolveIngest(c); err != nil {
		return err
	}
	var err error
	if c.Site, err = c.Site.WithDefaults(); err != nil {
		return err
	}
	if c.Assistant, err = c.Assistant.WithDefaults(c.Site.MaxAddresses); err != nil {
		return err
	}
	if c.Dashboard, err = c.Dashboard.WithDefaults(); err != nil {
		return err
	}
	switch {
	case c.KeyCacheTTL == 0:
		c.KeyCacheTTL = DefaultKeyCacheTTL
	case c.KeyCacheTTL < 0:
		c.KeyCacheTTL = 0
	}
	return nil
}

// orDefault gives the size or duration *v, the Config field named field,
// its default def when it is zero, and refuses it when it is negative: a
// zero means "not set" throughout Config.
func orDefault[T ~int | ~int64](field string, v *T, def T) error {
	switch {
	case *v < 0:
		return fmt.Errorf("server: Config.%s must not be negative, got %v", field, *v)
	case *v == 0:
		*v = def
	}
	return nil
}
