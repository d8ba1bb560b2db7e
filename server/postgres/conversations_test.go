package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// A page of conversations, oldest first (the export) or newest first (the
// dashboard), reads the (project_id, id) index from the cursor, forwards
// or backwards, and sorts nothing; the plans are logged (go test -v) and
// checked.
func TestConversationsReadTheIDIndexEitherWay(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	s := open(t, db)
	conn := connect(t, db)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= 3; i++ {
		p := fmt.Sprintf("p%d", i)
		if err := s.CreateProject(ctx, storetest.NewProject(p)); err != nil {
			t.Fatal(err)
		}
		th := store.Thread{ID: fmt.Sprintf("01JZT%021d", i), ProjectID: p, KeyHash: storetest.Hash(p), Fp: "anonymous", Caller: store.CallerWeb, CreatedAt: at}
		e := store.Exchange{ID: fmt.Sprintf("01JZA%021d", i), QuestionID: fmt.Sprintf("01JZQ%021d", i), ProjectID: p, ThreadID: th.ID,
			Question: "q", AskedAt: at, ResponseType: store.ResponseAnswer, Resolution: store.Answered, Caller: store.CallerWeb}
		if err := s.AddExchange(ctx, e, &th); err != nil {
			t.Fatal(err)
		}
	}
	// 30,000 more, a minute apart, IDs in the order asked, a third of
	// them unanswered; p2, the one read, holds one in a hundred, so that
	// reading the primary key and skipping the other projects' rows
	// costs more than the (project_id, id) index.
	if _, err := conn.Exec(ctx, `
		INSERT INTO assistant_exchanges (id, question_id, project_id, thread_id, question, asked_at, answer, answered_at,
			response_type, resolution, sources, page_url, caller)
		SELECT '01JZB' || lpad(n::text, 21, '0'), '01JZR' || lpad(n::text, 21, '0'), 'p' || project,
			'01JZT' || lpad(project::text, 21, '0'), 'question ' || n, $1::timestamptz + n * interval '1 minute', 'answer', NULL,
			'answer', CASE WHEN n % 9 < 3 THEN 'unanswered' ELSE 'answered' END, '[]', '', 'web'
		FROM generate_series(1, 30000) AS n,
			LATERAL (SELECT CASE WHEN n % 100 = 0 THEN 2 WHEN n % 2 = 0 THEN 1 ELSE 3 END AS project) AS p`, at); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) assistant_exchanges`); err != nil {
		t.Fatal(err)
	}
	cursor := "01JZB000000000000000015000"
	for _, tc := range []struct {
		name string
		q    store.ConversationsQuery
		scan string
	}{
		{"oldest first", store.ConversationsQuery{ProjectID: "p2", Limit: 51}, "Index Scan using assistant_exchanges_by_id"},
		{"oldest first, after", store.ConversationsQuery{ProjectID: "p2", Limit: 51, After: cursor}, "Index Scan using assistant_exchanges_by_id"},
		{"newest first", store.ConversationsQuery{ProjectID: "p2", Limit: 51, Newest: true}, "Index Scan Backward using assistant_exchanges_by_id"},
		{"newest first, earlier", store.ConversationsQuery{ProjectID: "p2", Limit: 51, After: cursor, Newest: true}, "Index Scan Backward using assistant_exchanges_by_id"},
		{"newest first, unanswered", store.ConversationsQuery{ProjectID: "p2", Limit: 51, Resolution: store.Unanswered, Newest: true}, "Index Scan Backward using assistant_exchanges_by_id"},
	} {
		query, args := postgres.ConversationsQuery(tc.q)
		rows, err := conn.Query(ctx, "EXPLAIN (COSTS OFF) "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		t.Logf("EXPLAIN of %s:\n%s", tc.name, plan)
		if !strings.Contains(plan, tc.scan) || strings.Contains(plan, "Sort") {
			t.Errorf("%s: the plan does not read by %q without sorting:\n%s", tc.name, tc.scan, plan)
		}
		// And the page is the one the plan promises.
		page, err := s.QueryConversations(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Exchanges) != 51 || !page.HasMore {
			t.Errorf("%s: %d exchanges, HasMore %v; want 51, true", tc.name, len(page.Exchanges), page.HasMore)
		}
		for i, e := range page.Exchanges {
			if i > 0 && (e.ID > page.Exchanges[i-1].ID) != !tc.q.Newest {
				t.Errorf("%s: %s follows %s", tc.name, e.ID, page.Exchanges[i-1].ID)
				break
			}
		}
	}
}
