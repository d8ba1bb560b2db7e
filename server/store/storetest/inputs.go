package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// testInputs checks the refusal of the arguments package store's checks
// (its Validate functions) find unfit: every method refuses them with
// ErrInvalid, before it stores anything.
func testInputs(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"InvalidArgumentsAreRefusedAndStoreNothing", func(t *testing.T, s store.Store) {
			ctx := t.Context()
			idem := &store.Idempotency{Key: "k", RequestHash: []byte{1}}
			job := store.NewJob{ID: "j", ProjectID: "p", Prompt: "x", CreatedAt: At(0)}
			with := func(f func(*store.NewJob)) store.NewJob { j := job; f(&j); return j }
			view := store.ViewCount{ProjectID: "p", Path: "/", Hour: Hour(0), Human: 1}
			// The bad count comes after a good one, which must not be
			// stored either.
			withView := func(f func(*store.ViewCount)) []store.ViewCount { v := view; f(&v); return []store.ViewCount{view, v} }
			query := store.ViewsQuery{ProjectID: "p", Limit: 1}
			withQuery := func(f func(*store.ViewsQuery)) store.ViewsQuery { q := query; f(&q); return q }
			claim := store.Claim{Owner: "o", Now: At(0), LeaseFor: time.Minute, MaxAttempts: 1}
			withClaim := func(f func(*store.Claim)) store.Claim { c := claim; f(&c); return c }
			ignore2 := func(_ any, err error) error { return err }
			ignore3 := func(_ any, _ bool, err error) error { return err }
			halfHourZone := time.FixedZone("IST", 5*3600+1800)

			cases := map[string]error{
				"project without ID":     s.CreateProject(ctx, store.Project{}),
				"update without ID":      s.UpdateProject(ctx, store.Project{}),
				"key without ID":         s.CreateKey(ctx, store.APIKey{Hash: []byte{1}}),
				"key without hash":       s.CreateKey(ctx, store.APIKey{ID: "k"}),
				"key with empty project": s.CreateKey(ctx, store.APIKey{ID: "k", Hash: []byte{1}, Projects: []string{""}}),
				"key with empty scope":   s.CreateKey(ctx, store.APIKey{ID: "k", Hash: []byte{1}, Scopes: []store.Scope{""}}),
				"revoke at zero time":    s.RevokeKey(ctx, "k", time.Time{}),
				"job without ID":         ignore3(s.CreateJob(ctx, with(func(j *store.NewJob) { j.ID = "" }))),
				"job without project":    ignore3(s.CreateJob(ctx, with(func(j *store.NewJob) { j.ProjectID = "" }))),
				"job without prompt":     ignore3(s.CreateJob(ctx, with(func(j *store.NewJob) { j.Prompt = "" }))),
				"job with empty idempotency key": ignore3(s.CreateJob(ctx, with(func(j *store.NewJob) {
					j.Idempotency = &store.Idempotency{RequestHash: []byte{1}}
				}))),
				"job with empty request hash": ignore3(s.CreateJob(ctx, with(func(j *store.NewJob) {
					j.Idempotency = &store.Idempotency{Key: "k"}
				}))),
				"prompt without job":        ignore3(s.AddPrompt(ctx, store.NewPrompt{ProjectID: "p", Prompt: "x", Idempotency: idem})),
				"prompt without text":       ignore3(s.AddPrompt(ctx, store.NewPrompt{ProjectID: "p", JobID: "j"})),
				"prompt with negative caps": ignore3(s.AddPrompt(ctx, store.NewPrompt{ProjectID: "p", JobID: "j", Prompt: "x", Limits: store.PromptLimits{Prompts: -1}})),
				"archive at zero time":      ignore2(s.ArchiveJob(ctx, "p", "j", time.Time{})),
				"claim without owner":       ignore2(s.ClaimJob(ctx, withClaim(func(c *store.Claim) { c.Owner = "" }))),
				"claim without time":        ignore2(s.ClaimJob(ctx, withClaim(func(c *store.Claim) { c.Now = time.Time{} }))),
				"claim without lease":       ignore2(s.ClaimJob(ctx, withClaim(func(c *store.Claim) { c.LeaseFor = 0 }))),
				"claim without attempts":    ignore2(s.ClaimJob(ctx, withClaim(func(c *store.Claim) { c.MaxAttempts = 0 }))),
				"extend for no time":        s.ExtendLease(ctx, "j", "o", At(0), 0),
				"extend for under 1µs":      s.ExtendLease(ctx, "j", "o", At(0), time.Microsecond-1),
				"extend for negative time":  s.ExtendLease(ctx, "j", "o", At(0), -time.Minute),
				"extend at zero now":        s.ExtendLease(ctx, "j", "o", time.Time{}, time.Minute),
				"finish without outcome":    ignore2(s.FinishJob(ctx, store.Finish{JobID: "j", Owner: "o"})),
				"finish with negative":      ignore2(s.FinishJob(ctx, store.Finish{JobID: "j", Owner: "o", Outcome: store.Completed, Handled: -1})),
				"views without project":     s.AddViews(ctx, withView(func(v *store.ViewCount) { v.ProjectID = "" })),
				"views without path":        s.AddViews(ctx, withView(func(v *store.ViewCount) { v.Path = "" })),
				"views at a partial hour":   s.AddViews(ctx, withView(func(v *store.ViewCount) { v.Hour = Hour(0).Add(time.Minute) })),
				"views at zero hour":        s.AddViews(ctx, withView(func(v *store.ViewCount) { v.Hour = time.Time{} })),
				"views at a half-hour zone": s.AddViews(ctx, withView(func(v *store.ViewCount) { v.Hour = Hour(0).Add(30 * time.Minute).In(halfHourZone) })),
				"negative human views":      s.AddViews(ctx, withView(func(v *store.ViewCount) { v.Human = -1 })),
				"negative ai views":         s.AddViews(ctx, withView(func(v *store.ViewCount) { v.AI = -1 })),
				"negative bot views":        s.AddViews(ctx, withView(func(v *store.ViewCount) { v.Bot = -1 })),
				"query without project":     ignore2(s.QueryViews(ctx, withQuery(func(q *store.ViewsQuery) { q.ProjectID = "" }))),
				"query with limit 0":        ignore2(s.QueryViews(ctx, withQuery(func(q *store.ViewsQuery) { q.Limit = 0 }))),
				"query with offset -1":      ignore2(s.QueryViews(ctx, withQuery(func(q *store.ViewsQuery) { q.Offset = -1 }))),
				"query from a partial hour": ignore2(s.QueryViews(ctx, withQuery(func(q *store.ViewsQuery) { q.From = Hour(0).Add(time.Second) }))),
				"query to a partial hour":   ignore2(s.QueryViews(ctx, withQuery(func(q *store.ViewsQuery) { q.To = Hour(0).Add(time.Second) }))),
			}
			for name, err := range cases {
				wantErr(t, name, err, store.ErrInvalid)
			}

			// Nothing was stored: no project, key, job, idempotency key or
			// view.
			ps, err := s.Projects(ctx)
			must(t, "Projects", err)
			diff(t, "Projects after refused calls", []store.Project{}, ps)
			ks, err := s.Keys(ctx)
			must(t, "Keys", err)
			diff(t, "Keys after refused calls", []store.APIKey{}, ks)
			wantResult(t, "QueryViews after refused calls", store.ViewsResult{Rows: []store.PathCounts{}},
				mustQuery(t, s, all("p")))
			mustProject(t, s, "p")
			wantAbsent(t, s, "p", "j")
			wantNoJob(t, s, "after refused calls", At(time.Hour))
			_, replayed, err := s.CreateJob(ctx, keyed(NewJob("p", "j2", At(0)), idem.Key, "another request"))
			must(t, "CreateJob with the refused calls' idempotency key", err)
			if replayed {
				t.Errorf("CreateJob with the refused calls' idempotency key: replayed = true, want a new job")
			}
		}},
		{"FinishWithHandledBeyondThePromptsIsRefused", func(t *testing.T, s store.Store) {
			// Whether Handled fits needs the stored job, so this check
			// is made inside the write; it must still change nothing.
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			leased := mustClaim(t, s, "w1", At(time.Minute), "j1")
			_, err := s.FinishJob(t.Context(), store.Finish{JobID: "j1", Owner: "w1", At: At(2 * time.Minute),
				Outcome: store.Completed, PRLink: "https://git.example.com/pr/1", Handled: 2})
			wantErr(t, "FinishJob with Handled 2 of 1 prompt", err, store.ErrInvalid)
			diffJob(t, "Job after the refused FinishJob", leased, mustJob(t, s, "p1", "j1"))
		}},
	})
}
