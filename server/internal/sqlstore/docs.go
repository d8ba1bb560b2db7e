package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// DocsTx is the statements of the documentation index's methods.
type DocsTx interface {
	// LockDocs locks the project's index, so that concurrent updates of
	// one project queue (a database whose writes hold one lock does
	// nothing).
	LockDocs(ctx context.Context, projectID string) error
	// DeleteDocs deletes every page and file record of the project.
	DeleteDocs(ctx context.Context, projectID string) error
	// DeleteDocFile deletes the pages read from file and, unless keep,
	// the file's record.
	DeleteDocFile(ctx context.Context, projectID, file string, keep bool) error
	// SaveDocFile records f's blob, over any record of its path.
	SaveDocFile(ctx context.Context, projectID string, f store.DocFile) error
	// SaveDocPage stores p (its ProjectID set) and its sections, over any
	// page at its path.
	SaveDocPage(ctx context.Context, p store.DocPage) error
	// SaveDocsCommit records the commit the project's index holds and the
	// time of its update.
	SaveDocsCommit(ctx context.Context, projectID, commit string, at time.Time) error
	// DocsState reads the project's commit, its time and file records, from one
	// consistent state; a project without an index has a zero state.
	DocsState(ctx context.Context, projectID string) (store.DocsState, error)
	// SearchDocs reads at most q.Limit sections of q's project and
	// filters matching every term (DocQueryTerms' words, the last a
	// prefix), best first (ties by path, then anchor), each with its
	// engine relevance (higher better) and a snippet marked with
	// store.SnippetMarkStart and End, in one statement. With q.AnyWord,
	// the terms are distinct, a section matches by any of them (no
	// prefix), and each hit's Terms is how many of them its section
	// holds; with q.MinTerms, only the sections holding that many are
	// hits, kept before q.Limit applies.
	SearchDocs(ctx context.Context, q store.DocsQuery, terms []string) ([]store.DocHit, []float64, error)
	// DocPage reads the page at path with its sections in order, in one
	// statement.
	DocPage(ctx context.Context, projectID, path string) (p store.DocPage, found bool, err error)
}

// UpdateDocs applies an update to a project's index in one transaction,
// in the order store.DocsStore documents, after the check of its fence.
func (s *Store) UpdateDocs(ctx context.Context, u store.DocsUpdate) error {
	return s.exec(ctx, "update docs", u.Validate(), func(tx Tx) error {
		if err := requireProject(ctx, tx, u.ProjectID); err != nil {
			return err
		}
		if err := tx.LockDocs(ctx, u.ProjectID); err != nil {
			return err
		}
		// The fence is checked once the index is locked: any other write
		// of the project's index then waits for this one, and the update
		// stays locked against a takeover until the commit.
		if f := u.Fence; f != nil {
			held, err := tx.HoldDocsUpdateLease(ctx, u.ProjectID, f.UpdateID, f.Owner, f.Now)
			if err != nil {
				return err
			}
			if !held {
				return fmt.Errorf("index of project %q: docs update %q, owner %q: %w", u.ProjectID, f.UpdateID, f.Owner, store.ErrLeaseLost)
			}
		}
		if u.Replace {
			if err := tx.DeleteDocs(ctx, u.ProjectID); err != nil {
				return err
			}
		}
		for _, f := range u.RemoveFiles {
			if err := tx.DeleteDocFile(ctx, u.ProjectID, f, false); err != nil {
				return err
			}
		}
		for _, f := range u.Files {
			if err := tx.DeleteDocFile(ctx, u.ProjectID, f.Path, true); err != nil {
				return err
			}
			if err := tx.SaveDocFile(ctx, u.ProjectID, f); err != nil {
				return err
			}
		}
		for _, p := range u.Pages {
			p.ProjectID = u.ProjectID
			if err := tx.SaveDocPage(ctx, p); err != nil {
				return err
			}
		}
		return tx.SaveDocsCommit(ctx, u.ProjectID, u.Commit, u.At)
	})
}

// DocsState returns what the project's index holds.
func (s *Store) DocsState(ctx context.Context, projectID string) (store.DocsState, error) {
	return read(ctx, s, "docs state", func(tx Tx) (store.DocsState, error) {
		st, err := tx.DocsState(ctx, projectID)
		if st.Files == nil {
			st.Files = map[string]string{}
		}
		return st, err
	})
}

// SearchDocs searches a project's index: the engine finds and ranks,
// and the scores and snippets are made here, alike for every backend.
func (s *Store) SearchDocs(ctx context.Context, q store.DocsQuery) ([]store.DocHit, error) {
	if err := q.Validate(); err != nil {
		return nil, s.db.Fail("search docs", err)
	}
	terms := store.DocQueryTerms(q.Query)
	if len(terms) == 0 {
		return []store.DocHit{}, nil
	}
	q.Groups = slices.Compact(slices.Sorted(slices.Values(q.Groups)))
	distinct := store.DistinctDocTerms(terms)
	if q.AnyWord {
		terms = distinct
	}
	return read(ctx, s, "search docs", func(tx Tx) ([]store.DocHit, error) {
		hits, raw, err := tx.SearchDocs(ctx, q, terms)
		if err != nil || len(hits) == 0 {
			return []store.DocHit{}, err
		}
		for i := range hits {
			hits[i].Snippet, hits[i].Marks = store.ParseMarkedSnippet(hits[i].Snippet)
			if !q.AnyWord {
				hits[i].Terms = len(distinct)
			}
		}
		return store.ScoreDocHits(hits, raw, q.MinScore), nil
	})
}

// DocPage returns a page of the project's index, or store.ErrNotFound.
func (s *Store) DocPage(ctx context.Context, projectID, path string) (store.DocPage, error) {
	return read(ctx, s, "doc page", func(tx Tx) (store.DocPage, error) {
		p, found, err := tx.DocPage(ctx, projectID, path)
		if err == nil && !found {
			err = fmt.Errorf("page %q of project %q: %w", path, projectID, store.ErrNotFound)
		}
		return p, err
	})
}
