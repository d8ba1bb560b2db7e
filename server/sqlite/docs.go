package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The documentation index on FTS5 (schema: doc_pages, doc_sections and
// the doc_search table that its triggers keep in step).

// LockDocs does nothing: BEGIN IMMEDIATE holds the database's one write
// lock already.
func (txn) LockDocs(context.Context, string) error { return nil }

// DeleteDocs deletes the project's pages (their sections and their
// entries in doc_search follow) and file records.
func (t txn) DeleteDocs(ctx context.Context, projectID string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM doc_pages WHERE project_id = ?`, projectID); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `DELETE FROM doc_files WHERE project_id = ?`, projectID)
	return err
}

// DeleteDocFile deletes the file's pages and, unless keep, its record.
func (t txn) DeleteDocFile(ctx context.Context, projectID, file string, keep bool) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM doc_pages WHERE project_id = ? AND file = ?`, projectID, file); err != nil {
		return err
	}
	if keep {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, `DELETE FROM doc_files WHERE project_id = ? AND file = ?`, projectID, file)
	return err
}

// SaveDocFile records the file's blob.
func (t txn) SaveDocFile(ctx context.Context, projectID string, f store.DocFile) error {
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO doc_files (project_id, file, blob) VALUES (?, ?, ?)
		 ON CONFLICT (project_id, file) DO UPDATE SET blob = excluded.blob`, projectID, f.Path, f.Blob)
	return err
}

// SaveDocPage replaces the page at p's path with p and its sections.
func (t txn) SaveDocPage(ctx context.Context, p store.DocPage) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM doc_pages WHERE project_id = ? AND path = ?`, p.ProjectID, p.Path); err != nil {
		return err
	}
	groups, err := json.Marshal(append([]string{}, p.Groups...))
	if err != nil {
		return err
	}
	var id int64
	if err := t.tx.QueryRowContext(ctx,
		`INSERT INTO doc_pages (project_id, path, file, title, description, groups, version, language)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		p.ProjectID, p.Path, p.File, p.Title, p.Description, string(groups), p.Version, p.Language).Scan(&id); err != nil {
		return err
	}
	sections := store.KeptDocSections(p.Sections)
	if len(sections) == 0 {
		// The title still needs a row to be found by.
		sections = []store.DocSection{{}}
	}
	for i, s := range sections {
		title := ""
		if i == 0 {
			title = strings.TrimSpace(p.Title + "\n" + p.Description)
		}
		if _, err := t.tx.ExecContext(ctx,
			`INSERT INTO doc_sections (page_id, ord, anchor, title, heading, text, code) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, i, s.Anchor, title, s.Heading, s.Text, s.Code); err != nil {
			return err
		}
	}
	return nil
}

// SaveDocsCommit records the index's commit and the time of its update.
func (t txn) SaveDocsCommit(ctx context.Context, projectID, commit string, at time.Time) error {
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO doc_indexes (project_id, commit_sha, updated_at) VALUES (?, ?, ?)
		 ON CONFLICT (project_id) DO UPDATE SET commit_sha = excluded.commit_sha, updated_at = excluded.updated_at`,
		projectID, commit, micros(at))
	return err
}

// DocsState reads the commit and the file records; Read's transaction
// makes them one state.
func (t txn) DocsState(ctx context.Context, projectID string) (store.DocsState, error) {
	st := store.DocsState{Files: map[string]string{}}
	err := t.tx.QueryRowContext(ctx, `SELECT commit_sha, updated_at FROM doc_indexes WHERE project_id = ?`, projectID).
		Scan(&st.Commit, timeCol{&st.UpdatedAt})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, err
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT file, blob FROM doc_files WHERE project_id = ?`, projectID)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var file, blob string
		if err := rows.Scan(&file, &blob); err != nil {
			return st, err
		}
		st.Files[file] = blob
	}
	return st, rows.Err()
}

// docSearchWeights are bm25's weights of doc_search's columns: title,
// heading, text, code.
const docSearchWeights = `10.0, 4.0, 1.0, 0.4`

// searchDocsQuery finds and ranks the page (the inner query: bm25 and the
// filters, no snippets), then makes the snippets of that page only,
// matching again by rowid (searchDocsPage). The columns are 0 title,
// 1 heading, 2 text, 3 code.
const searchDocsQuery = `
WITH top AS (
    SELECT doc_search.rowid AS id, -bm25(doc_search, ` + docSearchWeights + `) AS score
    FROM doc_search
    JOIN doc_sections s ON s.id = doc_search.rowid
    JOIN doc_pages p ON p.id = s.page_id
    WHERE doc_search MATCH ?1 AND ` + searchDocsFilters + `
    ORDER BY score DESC, p.path, s.ord
    LIMIT ?6
)` + searchDocsPage

// searchAnyWordQuery is searchDocsQuery for an any-word search, whose
// words are often common ones that most sections hold: FTS5 ranks them
// itself (rank, set to bm25 with the same weights) and hands them on
// best first, so that the filters' joins stop at the page's last hit
// instead of running for every match. Ties at the page's edge are then
// cut in FTS5's order, not by path.
const searchAnyWordQuery = `
WITH top AS (
    SELECT doc_search.rowid AS id, -doc_search.rank AS score
    FROM doc_search
    JOIN doc_sections s ON s.id = doc_search.rowid
    JOIN doc_pages p ON p.id = s.page_id
    WHERE doc_search MATCH ?1 AND doc_search.rank MATCH 'bm25(` + docSearchWeights + `)' AND ` + searchDocsFilters + `
    ORDER BY doc_search.rank
    LIMIT ?6
)` + searchDocsPage

// searchLeastWordsQuery is searchDocsQuery for an any-word search keeping
// the sections holding at least ?9 of its words (DocsQuery.MinTerms).
// Such a section holds one of any n-?9+1 of the n words, so the match ?1
// asks for those of the rarest ones (ANDed with every word, for bm25 to
// weigh them all), which far fewer sections hold than hold a common word.
// counted holds the sections of ?1 with the number of words each holds,
// from one match per word (?8: each common word ANDed with the rare ones,
// which FTS5 intersects in its lists). The matches counted does not hold are
// dropped before the joins and before bm25, so that only the sections
// kept are ranked. The rowid is written +rowid so that FTS5 is not handed
// it to seek each one: a seek computes bm25's statistics anew.
const searchLeastWordsQuery = `
WITH counted AS MATERIALIZED (
    SELECT m.rowid AS id, count(*) AS terms
    FROM json_each(?8) t JOIN doc_search m ON m.doc_search MATCH t.value
    GROUP BY m.rowid
    HAVING count(*) >= ?9
),
top AS (
    SELECT doc_search.rowid AS id, -bm25(doc_search, ` + docSearchWeights + `) AS score
    FROM doc_search
    JOIN doc_sections s ON s.id = doc_search.rowid
    JOIN doc_pages p ON p.id = s.page_id
    WHERE doc_search MATCH ?1 AND +doc_search.rowid IN (SELECT id FROM counted) AND ` + searchDocsFilters + `
    ORDER BY score DESC, p.path, s.ord
    LIMIT ?6
)` + searchDocsPageColumns + `
       (SELECT terms FROM counted WHERE counted.id = top.id)` + searchDocsPageFrom

// docTermsCounted is how many sections of a word searchLeastWords counts
// at most to find the rarest words: past it, a word is common enough.
const docTermsCounted = 2000

// searchDocsFilters selects the sections of the query's project and
// filters.
const searchDocsFilters = `p.project_id = ?2
      AND (?3 = '' OR p.version = ?3) AND (?4 = '' OR p.language = ?4)
      AND (?5 = '[]' OR EXISTS (SELECT 1 FROM json_each(p.groups) g WHERE g.value IN (SELECT value FROM json_each(?5))))`

// searchDocsPage reads the hits of top with their snippets. An any-word
// search also counts, for each hit, the terms of ?7 (a JSON array, empty
// otherwise) its section holds, each term matched on that one rowid,
// which FTS5 seeks in the term's list.
const searchDocsPage = searchDocsPageColumns + `
       (SELECT count(*) FROM json_each(?7) t
        WHERE EXISTS (SELECT 1 FROM doc_search m WHERE m.doc_search MATCH t.value AND m.rowid = top.id))` + searchDocsPageFrom

// searchDocsPageColumns and searchDocsPageFrom are searchDocsPage but for
// its last column, the hit's count of terms.
const (
	searchDocsPageColumns = `
SELECT p.path, s.anchor, p.title, s.heading, p.groups, p.version, p.language, top.score,
       snippet(doc_search, 2, char(1), char(2), '…', 24), snippet(doc_search, 3, char(1), char(2), '…', 24),
       s.text, s.code,`
	searchDocsPageFrom = `
FROM top
JOIN doc_search ON doc_search.rowid = top.id
JOIN doc_sections s ON s.id = top.id
JOIN doc_pages p ON p.id = s.page_id
WHERE doc_search MATCH ?1
ORDER BY top.score DESC, p.path, s.ord`
)

// SearchDocs matches every term, each quoted (so nothing in it is FTS5
// syntax), the last as a prefix; with q.AnyWord, any term, none a prefix,
// and counts the terms of each hit, keeping those holding q.MinTerms.
func (t txn) SearchDocs(ctx context.Context, q store.DocsQuery, terms []string) ([]store.DocHit, []float64, error) {
	quoted := make([]string, len(terms))
	for i, term := range terms {
		// A term is letters and digits (store.DocQueryTerms): no quote
		// to escape, but doubling them keeps that true by construction.
		quoted[i] = `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
	}
	query, match, counted := searchDocsQuery, "", []string{}
	switch {
	case q.AnyWord && q.MinTerms > len(terms):
		return nil, nil, nil
	case q.AnyWord && q.MinTerms > 1:
		rare, err := t.rarestDocTerms(ctx, quoted, len(terms)-q.MinTerms+1)
		if err != nil {
			return nil, nil, err
		}
		anyRare := "(" + strings.Join(rare, " OR ") + ")"
		for _, term := range quoted {
			if !slices.Contains(rare, term) {
				// The sections holding a rare word are those a
				// section kept is among.
				term += " AND " + anyRare
			}
			counted = append(counted, term)
		}
		query, match = searchLeastWordsQuery, "("+strings.Join(quoted, " OR ")+") AND "+anyRare
	case q.AnyWord:
		query, match, counted = searchAnyWordQuery, strings.Join(quoted, " OR "), quoted
	default:
		quoted[len(quoted)-1] += "*"
		match = strings.Join(quoted, " AND ")
	}
	groups, err := json.Marshal(append([]string{}, q.Groups...))
	if err != nil {
		return nil, nil, err
	}
	countedJSON, err := json.Marshal(counted)
	if err != nil {
		return nil, nil, err
	}
	rows, err := t.tx.QueryContext(ctx, query,
		match, q.ProjectID, q.Version, q.Language, string(groups), q.Limit, string(countedJSON), string(countedJSON), q.MinTerms)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		hits []store.DocHit
		raw  []float64
	)
	for rows.Next() {
		var (
			h                  store.DocHit
			groups             string
			score              float64
			textSnip, codeSnip string
			text, code         string
		)
		if err := rows.Scan(&h.Path, &h.Anchor, &h.Title, &h.Heading, &groups, &h.Version, &h.Language, &score,
			&textSnip, &codeSnip, &text, &code, &h.Terms); err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal([]byte(groups), &h.Groups); err != nil {
			return nil, nil, err
		}
		h.Snippet = store.PickDocSnippet(textSnip, codeSnip, text, code)
		hits = append(hits, h)
		raw = append(raw, score)
	}
	return hits, raw, rows.Err()
}

// rarestDocTerms returns the k of quoted (FTS5 phrases) that the fewest
// sections hold, each counted up to docTermsCounted, ties in their order.
func (t txn) rarestDocTerms(ctx context.Context, quoted []string, k int) ([]string, error) {
	if k >= len(quoted) {
		return quoted, nil
	}
	list, err := json.Marshal(quoted)
	if err != nil {
		return nil, err
	}
	rows, err := t.tx.QueryContext(ctx,
		`SELECT t.key, (SELECT count(*) FROM (SELECT 1 FROM doc_search WHERE doc_search MATCH t.value LIMIT ?2))
		 FROM json_each(?1) t`, string(list), docTermsCounted)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := make([]int, len(quoted))
	for rows.Next() {
		var i, n int
		if err := rows.Scan(&i, &n); err != nil {
			return nil, err
		}
		counts[i] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	order := make([]int, len(quoted))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return counts[a] - counts[b] })
	rare := make([]string, k)
	for i, j := range order[:k] {
		rare[i] = quoted[j]
	}
	return rare, nil
}

// DocPage reads the page and its sections in one statement.
func (t txn) DocPage(ctx context.Context, projectID, path string) (store.DocPage, bool, error) {
	rows, err := t.tx.QueryContext(ctx,
		`SELECT p.file, p.title, p.description, p.groups, p.version, p.language, s.anchor, s.heading, s.text, s.code
		 FROM doc_pages p JOIN doc_sections s ON s.page_id = p.id
		 WHERE p.project_id = ? AND p.path = ? ORDER BY s.ord`, projectID, path)
	if err != nil {
		return store.DocPage{}, false, err
	}
	defer rows.Close()
	p := store.DocPage{ProjectID: projectID, Path: path}
	found := false
	for rows.Next() {
		var (
			s      store.DocSection
			groups string
		)
		if err := rows.Scan(&p.File, &p.Title, &p.Description, &groups, &p.Version, &p.Language,
			&s.Anchor, &s.Heading, &s.Text, &s.Code); err != nil {
			return store.DocPage{}, false, err
		}
		if !found {
			if err := json.Unmarshal([]byte(groups), &p.Groups); err != nil {
				return store.DocPage{}, false, err
			}
		}
		found = true
		p.Sections = append(p.Sections, s)
	}
	if err := rows.Err(); err != nil || !found {
		return store.DocPage{}, false, err
	}
	p.Sections = store.KeptDocSections(p.Sections)
	return p, true, nil
}
