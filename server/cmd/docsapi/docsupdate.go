package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/store"
)

// docsUpdaterConfig is serve's documentation updater: it reads each
// project's repository with the git settings its jobs use (the project's
// parts), maps files to pages by the project's docsRoot and docsExclude,
// and refreshes on the interval only the projects the configuration
// names, the others having no repository reader here.
func docsUpdaterConfig(d docsConfig, st store.Store, parts func(context.Context, store.Project) (engine.Parts, error), projects resolvedProjects, log *slog.Logger) docsupdate.Config {
	cfg := docsupdate.Config{
		Store: st, Owner: engineOwner(), Logger: log,
		Timeout: time.Duration(d.Timeout), LeaseFor: time.Duration(d.LeaseFor), Retention: time.Duration(d.Retention),
		Trees: func(ctx context.Context, p store.Project) (docsupdate.TreeReader, error) {
			ps, err := parts(ctx, p)
			if err != nil {
				return nil, err
			}
			reader, ok := ps.Repositories.(docsupdate.TreeReader)
			if !ok {
				return nil, errors.New("the project's repositories cannot be read as trees")
			}
			return reader, nil
		},
		Options: func(p store.Project) docs.Options { return projects.docs[p.ID] },
		Refresh: func(p store.Project) bool { _, ok := projects.runner[p.ID]; return ok },
	}
	if d.RefreshInterval != nil {
		cfg.RefreshInterval = time.Duration(*d.RefreshInterval)
		if cfg.RefreshInterval == 0 {
			cfg.RefreshInterval = -1 // "0s" in the file: off
		}
	}
	return cfg
}

// checkDocsConfig refuses what the updater would.
func checkDocsConfig(d docsConfig) error {
	switch {
	case d.RefreshInterval != nil && *d.RefreshInterval < 0:
		return fmt.Errorf("docs.refreshInterval must not be negative (\"0s\" turns it off)")
	case d.Timeout < 0 || d.LeaseFor < 0 || d.Retention < 0:
		return fmt.Errorf("docs.timeout, docs.leaseFor and docs.retention must not be negative")
	}
	return nil
}

// chainRunEnd calls each of fns, skipping nil ones.
func chainRunEnd(fns ...func(engine.RunInfo)) func(engine.RunInfo) {
	return func(info engine.RunInfo) {
		for _, f := range fns {
			if f != nil {
				f(info)
			}
		}
	}
}
