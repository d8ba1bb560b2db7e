package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/store"
)

// testPromptCaps checks AddPrompt's caps on a job's history
// (store.PromptLimits): a follow-up past either cap is refused as
// invalid and stores nothing, and follow-ups racing for the last places
// never pass a cap together.
func testPromptCaps(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"FollowUpsStopAtThePromptCap", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			limits := store.PromptLimits{Prompts: 4}
			var last store.Job
			for i := 1; i <= 6; i++ {
				p := store.NewPrompt{ProjectID: "p1", JobID: "j1", Prompt: fmt.Sprintf("follow-up %d", i), At: At(time.Duration(i) * time.Minute), Limits: limits}
				j, _, err := s.AddPrompt(t.Context(), p)
				if i <= 3 {
					must(t, fmt.Sprintf("AddPrompt %d of a cap of 4 prompts", i+1), err)
					last = j
					continue
				}
				wantErr(t, fmt.Sprintf("AddPrompt %d of a cap of 4 prompts", i+1), err, store.ErrInvalid)
			}
			got := mustJob(t, s, "p1", "j1")
			if len(got.Prompts) != 4 {
				t.Fatalf("the job holds %d prompts, want the cap, 4", len(got.Prompts))
			}
			// The refusals changed nothing, not even UpdatedAt.
			diff(t, "Job after the refused follow-ups", last, got)

			// A refused follow-up kept no idempotency key: with room made
			// (a higher cap), the same request is new, not a replay.
			refused := keyedPrompt("p1", "j1", "keyed", At(time.Hour), "k", "req")
			refused.Limits = limits
			_, _, err := s.AddPrompt(t.Context(), refused)
			wantErr(t, "keyed AddPrompt past the cap", err, store.ErrInvalid)
			refused.Limits.Prompts = 5
			j, replayed, err := s.AddPrompt(t.Context(), refused)
			must(t, "keyed AddPrompt with room", err)
			if replayed || len(j.Prompts) != 5 {
				t.Errorf("keyed AddPrompt with room: replayed %v, %d prompts; want a new prompt, 5", replayed, len(j.Prompts))
			}
		}},
		{"FollowUpsStopAtTheCharacterCap", func(t *testing.T, s store.Store) {
			// Characters, not bytes: each "é" is two bytes in UTF-8.
			mustProject(t, s, "p1")
			nj := NewJob("p1", "j1", At(0))
			nj.Prompt = "ééééé"
			mustCreateJob(t, s, nj)
			limits := store.PromptLimits{Characters: 20}
			for i, text := range []string{"ééééé", "ééééé", "ééééé"} { // 20 characters in all: the cap, reached
				_, _, err := s.AddPrompt(t.Context(), store.NewPrompt{ProjectID: "p1", JobID: "j1", Prompt: text, At: At(time.Duration(i+1) * time.Minute), Limits: limits})
				must(t, fmt.Sprintf("AddPrompt %d, within 20 characters", i+2), err)
			}
			want := mustJob(t, s, "p1", "j1")
			_, _, err := s.AddPrompt(t.Context(), store.NewPrompt{ProjectID: "p1", JobID: "j1", Prompt: "é", At: At(time.Hour), Limits: limits})
			wantErr(t, "AddPrompt of a 21st character", err, store.ErrInvalid)
			got := mustJob(t, s, "p1", "j1")
			diff(t, "Job after the refused follow-up", want, got)
			if n := historyCharacters(got); len(got.Prompts) != 4 || n != 20 {
				t.Errorf("the job holds %d prompts of %d characters, want 4 of 20", len(got.Prompts), n)
			}
		}},
		{"ReplayAtTheCapIsAnswered", func(t *testing.T, s store.Store) {
			// The idempotency key comes first: a client retrying the
			// follow-up that filled the job gets its answer, not a
			// refusal.
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			p := keyedPrompt("p1", "j1", "last", At(time.Minute), "k", "req")
			p.Limits = store.PromptLimits{Prompts: 2}
			first, _, err := s.AddPrompt(t.Context(), p)
			must(t, "AddPrompt filling the job", err)
			again, replayed, err := s.AddPrompt(t.Context(), p)
			must(t, "replay of the AddPrompt that filled the job", err)
			if !replayed {
				t.Errorf("replay of the AddPrompt that filled the job: replayed = false")
			}
			diffJob(t, "replay", first, again)
		}},
		{"ConcurrentFollowUpsNeverPassTheCaps", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			// Each cap leaves room for 3 of the workers' follow-ups. A
			// few rounds, since a store that checks outside its write
			// may get lucky in one.
			caps := []struct {
				name   string
				limits store.PromptLimits
				first  string // the job's own prompt
			}{
				{"prompts", store.PromptLimits{Prompts: 4}, "x"},
				{"characters", store.PromptLimits{Characters: 1 + 3*len("more")}, "x"},
			}
			for _, c := range caps {
				for round := range 4 {
					id := fmt.Sprintf("j-%s-%d", c.name, round)
					nj := NewJob("p1", id, At(0))
					nj.Prompt = c.first
					mustCreateJob(t, s, nj)
					errs := make([]error, workers)
					together(func(w int) {
						_, _, errs[w] = s.AddPrompt(t.Context(), store.NewPrompt{ProjectID: "p1", JobID: id, Prompt: "more",
							At: At(time.Duration(w+1) * time.Second), Limits: c.limits})
					})
					added := 0
					for w, err := range errs {
						switch {
						case err == nil:
							added++
						case !errors.Is(err, store.ErrInvalid):
							t.Errorf("%s: worker %d: AddPrompt: %v, want nil or %v", id, w, err, store.ErrInvalid)
						}
					}
					j := mustJob(t, s, "p1", id)
					if added != 3 || len(j.Prompts) != 4 {
						t.Errorf("%s: %d follow-ups accepted and %d prompts stored, want 3 and 4 (the cap on %s)", id, added, len(j.Prompts), c.name)
					}
				}
			}
		}},
	})
}

// historyCharacters counts the characters of j's prompts.
func historyCharacters(j store.Job) int {
	var b strings.Builder
	for _, p := range j.Prompts {
		b.WriteString(p.Text)
	}
	return utf8.RuneCountInString(b.String())
}
