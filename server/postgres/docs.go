package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docsapi/docsapi-go/server/store"
)

// The documentation index on PostgreSQL's full-text search (schema:
// doc_pages, doc_sections with a weighted tsvector and its GIN index).

// UpdateDocs applies u (store.DocsStore), then brings the statistics of
// the index's tables up to date when u wrote more pages than autovacuum's
// threshold for an analyze (50 and a tenth of the rows): without them,
// after a large first index, the generic plan of the search starts from
// the project's pages and tests every section's vector instead of using
// the GIN index, until autovacuum's next round.
func (s *Store) UpdateDocs(ctx context.Context, u store.DocsUpdate) error {
	if err := s.shared.UpdateDocs(ctx, u); err != nil {
		return err
	}
	if len(u.Pages) < analyzeDocsMin {
		return nil
	}
	// The update is committed: a failure here leaves the statistics to
	// autovacuum, and the update succeeded all the same.
	if err := s.analyzeDocs(ctx, len(u.Pages)); err != nil {
		s.log.Warn("postgres: analyze of the documentation index after an update", "project", u.ProjectID, "err", err)
	}
	return nil
}

// analyzeDocsMin is the fewest pages an update writes before analyzeDocs
// is considered, autovacuum's base threshold: below it the statistics
// matter little and the round trip would be spent on every small update.
const analyzeDocsMin = 50

// analyzeDocs analyzes doc_pages and doc_sections if written pages exceed
// a tenth of doc_pages' estimated rows (none when never analyzed).
func (s *Store) analyzeDocs(ctx context.Context, written int) error {
	db, err := s.db()
	if err != nil {
		return err
	}
	var rows float64
	if err := db.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'doc_pages'::regclass`).Scan(&rows); err != nil {
		return err
	}
	if float64(written) < analyzeDocsMin+0.1*max(rows, 0) {
		return nil
	}
	_, err = db.Exec(ctx, `ANALYZE doc_pages, doc_sections`)
	return err
}

// LockDocs locks the project's index row, creating it, so that concurrent
// updates of one project's index queue instead of meeting on its paths.
func (t txn) LockDocs(ctx context.Context, projectID string) error {
	if _, err := t.q.Exec(ctx,
		`INSERT INTO doc_indexes (project_id, commit_sha) VALUES ($1, '') ON CONFLICT DO NOTHING`, projectID); err != nil {
		return err
	}
	_, err := t.q.Exec(ctx, `SELECT 1 FROM doc_indexes WHERE project_id = $1 FOR UPDATE`, projectID)
	return err
}

// DeleteDocs deletes the project's pages (their sections follow) and file
// records.
func (t txn) DeleteDocs(ctx context.Context, projectID string) error {
	if _, err := t.q.Exec(ctx, `DELETE FROM doc_pages WHERE project_id = $1`, projectID); err != nil {
		return err
	}
	_, err := t.q.Exec(ctx, `DELETE FROM doc_files WHERE project_id = $1`, projectID)
	return err
}

// DeleteDocFile deletes the file's pages and, unless keep, its record.
func (t txn) DeleteDocFile(ctx context.Context, projectID, file string, keep bool) error {
	if _, err := t.q.Exec(ctx, `DELETE FROM doc_pages WHERE project_id = $1 AND file = $2`, projectID, file); err != nil {
		return err
	}
	if keep {
		return nil
	}
	_, err := t.q.Exec(ctx, `DELETE FROM doc_files WHERE project_id = $1 AND file = $2`, projectID, file)
	return err
}

// SaveDocFile records the file's blob.
func (t txn) SaveDocFile(ctx context.Context, projectID string, f store.DocFile) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO doc_files (project_id, file, blob) VALUES ($1, $2, $3)
		 ON CONFLICT (project_id, file) DO UPDATE SET blob = excluded.blob`, projectID, f.Path, f.Blob)
	return err
}

// saveDocPage inserts a page and its sections in one statement, each
// section's vector made from its fields with their weights.
const saveDocPage = `
WITH page AS (
    INSERT INTO doc_pages (project_id, path, file, title, description, groups, version, language)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id
)
INSERT INTO doc_sections (page_id, ord, anchor, heading, text, code, search)
SELECT page.id, s.ord - 1, s.anchor, s.heading, s.text, s.code,
       setweight(to_tsvector('english', CASE WHEN s.ord = 1 THEN $4 || E'\n' || $5 ELSE '' END), 'A')
       || setweight(to_tsvector('english', s.heading), 'B')
       || setweight(to_tsvector('english', s.text), 'C')
       || setweight(to_tsvector('english', s.code), 'D')
FROM page, unnest($9::text[], $10::text[], $11::text[], $12::text[]) WITH ORDINALITY AS s (anchor, heading, text, code, ord)`

// SaveDocPage replaces the page at p's path with p and its sections.
func (t txn) SaveDocPage(ctx context.Context, p store.DocPage) error {
	if _, err := t.q.Exec(ctx, `DELETE FROM doc_pages WHERE project_id = $1 AND path = $2`, p.ProjectID, p.Path); err != nil {
		return err
	}
	sections := store.KeptDocSections(p.Sections)
	if len(sections) == 0 {
		// The title still needs a row to be found by.
		sections = []store.DocSection{{}}
	}
	var anchors, headings, texts, codes []string
	for _, s := range sections {
		anchors, headings = append(anchors, s.Anchor), append(headings, s.Heading)
		texts, codes = append(texts, s.Text), append(codes, s.Code)
	}
	_, err := t.q.Exec(ctx, saveDocPage, p.ProjectID, p.Path, p.File, p.Title, p.Description,
		append([]string{}, p.Groups...), p.Version, p.Language, anchors, headings, texts, codes)
	return err
}

// SaveDocsCommit records the index's commit and the time of its update.
func (t txn) SaveDocsCommit(ctx context.Context, projectID, commit string, at time.Time) error {
	_, err := t.q.Exec(ctx,
		`INSERT INTO doc_indexes (project_id, commit_sha, updated_at) VALUES ($1, $2, $3)
		 ON CONFLICT (project_id) DO UPDATE SET commit_sha = excluded.commit_sha, updated_at = excluded.updated_at`,
		projectID, commit, ts(at))
	return err
}

// DocsState reads the commit and the file records in one statement, one
// snapshot: one row with NULLs when the project has neither.
func (t txn) DocsState(ctx context.Context, projectID string) (store.DocsState, error) {
	st := store.DocsState{Files: map[string]string{}}
	rows, _ := t.q.Query(ctx,
		`SELECT i.commit_sha, i.updated_at, f.file, f.blob
		 FROM (SELECT $1::text COLLATE "C" AS project_id) x
		 LEFT JOIN doc_indexes i ON i.project_id = x.project_id
		 LEFT JOIN doc_files f ON f.project_id = x.project_id`, projectID)
	var commit, file, blob *string
	var updated pgtype.Timestamptz
	_, err := pgx.ForEachRow(rows, []any{&commit, &updated, &file, &blob}, func() error {
		if commit != nil {
			st.Commit = *commit
		}
		st.UpdatedAt = fromTS(updated)
		if file != nil && blob != nil {
			st.Files[*file] = *blob
		}
		return nil
	})
	return st, err
}

// searchDocsQuery finds and ranks the page of sections (ts_rank_cd with
// the weights of D code, C text, B heading, A title, over 1 + the log of
// the section's length), then makes the snippets of that page only. An
// any-word search also counts, for each hit of the page, the terms of $8
// (tsquery lexemes, none otherwise) its section's vector holds, and with
// a least count $9 above 1 counts them for every match, to keep those
// holding that many before the limit.
const searchDocsQuery = `
WITH q AS (SELECT to_tsquery('english', $2) AS q),
top AS (
    SELECT s.page_id, s.ord, ts_rank_cd('{0.04, 0.1, 0.4, 1.0}', s.search, q.q, 1) AS score, p.path
    FROM q, doc_sections s
    JOIN doc_pages p ON p.id = s.page_id
    WHERE s.search @@ q.q AND p.project_id = $1
      AND ($3 = '' OR p.version = $3) AND ($4 = '' OR p.language = $4)
      AND (cardinality($5::text[]) = 0 OR p.groups && $5::text[])
      AND ($9 <= 1 OR (SELECT count(*) FROM unnest($8::text[]) t(term) WHERE s.search @@ to_tsquery('english', t.term)) >= $9)
    ORDER BY score DESC, p.path, s.ord
    LIMIT $6
)
SELECT p.path, s.anchor, p.title, s.heading, p.groups, p.version, p.language, top.score,
       ts_headline('english', s.text, q.q, $7), ts_headline('english', s.code, q.q, $7), s.text, s.code,
       (SELECT count(*)::int FROM unnest($8::text[]) t(term) WHERE s.search @@ to_tsquery('english', t.term))
FROM top
JOIN doc_sections s ON s.page_id = top.page_id AND s.ord = top.ord
JOIN doc_pages p ON p.id = top.page_id, q
ORDER BY top.score DESC, top.path, top.ord`

// headlineOptions makes ts_headline mark matches as the shared code reads
// them (store.SnippetMarkStart and End), about as long as SQLite's.
const headlineOptions = `StartSel=` + store.SnippetMarkStart + `, StopSel=` + store.SnippetMarkEnd + `, MaxWords=24, MinWords=12, ShortWord=2`

// SearchDocs matches every term, each quoted as a tsquery lexeme (so
// nothing in it is tsquery syntax), the last as a prefix; with
// q.AnyWord, any term, none a prefix, and counts the terms of each hit,
// keeping those holding q.MinTerms.
func (t txn) SearchDocs(ctx context.Context, q store.DocsQuery, terms []string) ([]store.DocHit, []float64, error) {
	quoted := make([]string, len(terms))
	for i, term := range terms {
		// A term is letters and digits (store.DocQueryTerms): no quote
		// or backslash to escape, but escaping keeps that true by
		// construction.
		quoted[i] = `'` + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(term) + `'`
	}
	match, counted := "", []string{}
	if q.AnyWord {
		match, counted = strings.Join(quoted, " | "), quoted
	} else {
		quoted[len(quoted)-1] += ":*"
		match = strings.Join(quoted, " & ")
	}
	rows, _ := t.q.Query(ctx, searchDocsQuery, q.ProjectID, match,
		q.Version, q.Language, append([]string{}, q.Groups...), q.Limit, headlineOptions, counted, q.MinTerms)
	var (
		hits []store.DocHit
		raw  []float64
		h    store.DocHit
		// score is real: ts_rank_cd's type.
		score                          float32
		textSnip, codeSnip, text, code string
	)
	_, err := pgx.ForEachRow(rows, []any{&h.Path, &h.Anchor, &h.Title, &h.Heading, &h.Groups, &h.Version, &h.Language, &score,
		&textSnip, &codeSnip, &text, &code, &h.Terms}, func() error {
		h.Snippet = store.PickDocSnippet(textSnip, codeSnip, text, code)
		hits = append(hits, h)
		raw = append(raw, float64(score))
		h = store.DocHit{}
		return nil
	})
	return hits, raw, err
}

// DocPage reads the page and its sections in one statement.
func (t txn) DocPage(ctx context.Context, projectID, path string) (store.DocPage, bool, error) {
	rows, _ := t.q.Query(ctx,
		`SELECT p.file, p.title, p.description, p.groups, p.version, p.language, s.anchor, s.heading, s.text, s.code
		 FROM doc_pages p JOIN doc_sections s ON s.page_id = p.id
		 WHERE p.project_id = $1 AND p.path = $2 ORDER BY s.ord`, projectID, path)
	p := store.DocPage{ProjectID: projectID, Path: path}
	var (
		s     store.DocSection
		found bool
	)
	_, err := pgx.ForEachRow(rows, []any{&p.File, &p.Title, &p.Description, &p.Groups, &p.Version, &p.Language,
		&s.Anchor, &s.Heading, &s.Text, &s.Code}, func() error {
		p.Sections, found = append(p.Sections, s), true
		return nil
	})
	if err != nil || !found {
		return store.DocPage{}, false, err
	}
	p.Sections = store.KeptDocSections(p.Sections)
	return p, true, nil
}
