package server

import (
	"testing"
	"time"
)

func TestIngestConfigIsChecked(t *testing.T) {
	for _, cfg := range []Config{
		{IngestWindow: 2 * time.Second},
		{IngestMaxCommit: -1},
		{IngestMaxQueued: -1},
	} {
		if err := resolveIngest(&cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	cfg := Config{}
	if err := resolveIngest(&cfg); err != nil ||
		cfg.IngestWindow != DefaultIngestWindow || cfg.IngestMaxCommit != DefaultIngestMaxCommit || cfg.IngestMaxQueued != DefaultIngestMaxQueued {
		t.Errorf("defaults: %v, %+v", err, cfg)
	}
}
