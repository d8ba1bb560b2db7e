package server

import (
	"errors"
	"fmt"

	"github.com/docsapi/docsapi-go/server/ingest"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/traffic"
)

// resolveIngest checks cfg's ingestion fields and sets their defaults.
func resolveIngest(cfg *Config) error {
	switch {
	case cfg.IngestWindow > ingest.MaxWindow:
		return fmt.Errorf("server: Config.IngestWindow must be at most %s, got %s", ingest.MaxWindow, cfg.IngestWindow)
	case cfg.IngestWindow == 0:
		cfg.IngestWindow = DefaultIngestWindow
	}
	return errors.Join(
		orDefault("IngestMaxCommit", &cfg.IngestMaxCommit, DefaultIngestMaxCommit),
		orDefault("IngestMaxQueued", &cfg.IngestMaxQueued, DefaultIngestMaxQueued),
	)
}

// classifier is the recorder's, if there is one, so that ingested views
// are classified exactly as its middleware classifies requests.
func classifier(rec *pageviews.Recorder) *traffic.Classifier {
	if rec != nil {
		return rec.Classifier()
	}
	return traffic.Default()
}

// onIngestCommit tells hook, if set, of an ingestion commit.
func onIngestCommit(hook func(IngestCommitInfo)) func(ingest.CommitInfo) {
	if hook == nil {
		return nil
	}
	return func(info ingest.CommitInfo) { hook(IngestCommitInfo(info)) }
}

// IngestStats counts what the ingestion endpoint stored since the Server
// was made, in this process.
type IngestStats struct {
	// Views counts the page views stored (human, AI and bot), whose
	// requests were answered 202. They never pass through the recorder
	// (Config.PageViews), so its pageviews.Stats does not count them.
	Views int64
}

// IngestStats returns what the ingestion endpoint stored so far.
func (s *Server) IngestStats() IngestStats { return IngestStats(s.ingest.Stats()) }
