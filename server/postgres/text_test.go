package postgres_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// PostgreSQL's text holds valid UTF-8 without NUL; Go strings hold any
// bytes. Where the store must keep such text anyway it is stored with
// U+FFFD in place of the bad bytes; a prompt is refused instead, as
// invalid, rather than silently changed.
func TestTextPostgreSQLCannotHold(t *testing.T) {
	s := open(t, newDatabase(t))
	ctx := t.Context()
	must(t, s.CreateProject(ctx, storetest.NewProject("p1")))

	t.Run("ViewPaths", func(t *testing.T) {
		// "/%ff" and "/%fe" decode to different invalid paths, which
		// become the same storable one: the batch must still apply.
		must(t, s.AddViews(ctx, []store.ViewCount{
			{ProjectID: "p1", Path: "/\xff", Hour: storetest.Hour(0), Human: 1},
			{ProjectID: "p1", Path: "/\xfe", Hour: storetest.Hour(0), Human: 2},
			{ProjectID: "p1", Path: "/a\x00b", Hour: storetest.Hour(0), AI: 1},
			{ProjectID: "p1", Path: "/ok", Hour: storetest.Hour(0), AI: 5},
		}))
		res, err := s.QueryViews(ctx, store.ViewsQuery{ProjectID: "p1", Limit: 10})
		must(t, err)
		want := []store.PathCounts{
			{Path: "/ok", Counts: store.Counts{AI: 5}},
			{Path: "/\uFFFD", Counts: store.Counts{Human: 3}},
			{Path: "/a\uFFFDb", Counts: store.Counts{AI: 1}},
		}
		if len(res.Rows) != len(want) {
			t.Fatalf("rows = %q, want %q", res.Rows, want)
		}
		for i := range want {
			if res.Rows[i] != want[i] {
				t.Errorf("row %d = %q, want %q", i, res.Rows[i], want[i])
			}
		}
	})

	t.Run("Prompt", func(t *testing.T) {
		for _, prompt := range []string{"nul \x00 inside", "invalid \xff byte"} {
			_, _, err := s.CreateJob(ctx, store.NewJob{ID: "j-bad", ProjectID: "p1", Prompt: prompt, CreatedAt: storetest.At(0)})
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("CreateJob with prompt %q: %v, want ErrInvalid", prompt, err)
			}
		}
		if _, _, err := s.CreateJob(ctx, storetest.NewJob("p1", "j1", storetest.At(0))); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.AddPrompt(ctx, store.NewPrompt{ProjectID: "p1", JobID: "j1", Prompt: "\x00", At: storetest.At(time.Minute)})
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddPrompt with NUL: %v, want ErrInvalid", err)
		}
	})

	t.Run("FailureReason", func(t *testing.T) {
		// A tool's output quoted in a reason must not make the outcome
		// unrecordable, or the job would be run again and again.
		if _, _, err := s.CreateJob(ctx, storetest.NewJob("p1", "j2", storetest.At(time.Hour))); err != nil {
			t.Fatal(err)
		}
		// MaxAttempts beyond the column's range means "no practical
		// limit", not an error.
		j, err := s.ClaimJob(ctx, store.Claim{Owner: "w", Now: storetest.At(2 * time.Hour), LeaseFor: time.Minute, MaxAttempts: math.MaxInt})
		must(t, err)
		if j.ID != "j1" {
			t.Fatalf("claimed %s, want j1", j.ID)
		}
		got, err := s.FinishJob(ctx, store.Finish{JobID: "j1", Owner: "w", At: storetest.At(3 * time.Hour),
			Outcome: store.Failed, FailureReason: "git: \xff\x00 exit 128"})
		must(t, err)
		if want := "git: \uFFFD\uFFFD exit 128"; got.FailureReason != want {
			t.Errorf("FailureReason = %q, want %q", got.FailureReason, want)
		}
	})
}
