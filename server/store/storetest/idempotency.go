package storetest

import (
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// keyed returns nj with the idempotency key and the hash of request.
func keyed(nj store.NewJob, key, request string) store.NewJob {
	nj.Idempotency = &store.Idempotency{Key: key, RequestHash: Hash(request)}
	return nj
}

// keyedPrompt returns a prompt for jobID with the idempotency key and the
// hash of request.
func keyedPrompt(projectID, jobID, text string, at time.Time, key, request string) store.NewPrompt {
	return store.NewPrompt{ProjectID: projectID, JobID: jobID, Prompt: text, At: at,
		Idempotency: &store.Idempotency{Key: key, RequestHash: Hash(request)}}
}

// wantAbsent checks that a job was not stored.
func wantAbsent(t *testing.T, s store.Store, projectID, jobID string) {
	t.Helper()
	_, err := s.Job(t.Context(), projectID, jobID)
	wantErr(t, "Job "+jobID+" (must not exist)", err, store.ErrNotFound)
}

func testIdempotency(t *testing.T, open opener) {
	runAll(t, open, []subtest{
		{"CreateReplayReturnsOriginalJobAndCreatesNone", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			orig := mustCreateJob(t, s, keyed(NewJob("p1", "j1", At(0)), "k", "req"))
			// A retry gets a fresh job ID from the server; the rest may
			// differ too, since the hash alone says "same request".
			retry := keyed(NewJob("p1", "j2", At(time.Minute)), "k", "req")
			retry.Prompt = "other text"
			got, replayed, err := s.CreateJob(t.Context(), retry)
			must(t, "CreateJob replay", err)
			if !replayed {
				t.Errorf("CreateJob replay: replayed = false, want true")
			}
			diffJob(t, "CreateJob replay result", orig, got)
			wantAbsent(t, s, "p1", "j2")
			diffJob(t, "Job j1", orig, mustJob(t, s, "p1", "j1"))
		}},
		{"CreateReplayReturnsJobAsItIsNow", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, keyed(NewJob("p1", "j1", At(0)), "k", "req"))
			mustAddPrompt(t, s, "p1", "j1", "more", At(time.Minute))
			_, err := s.ArchiveJob(t.Context(), "p1", "j1", At(2*time.Minute))
			must(t, "ArchiveJob", err)
			got, replayed, err := s.CreateJob(t.Context(), keyed(NewJob("p1", "j2", At(3*time.Minute)), "k", "req"))
			must(t, "CreateJob replay of an archived job", err)
			if !replayed {
				t.Errorf("CreateJob replay: replayed = false, want true")
			}
			now := mustJob(t, s, "p1", "j1")
			if now.Status != store.JobStatusArchived || len(now.Prompts) != 2 {
				t.Fatalf("Job j1: status %q with %d prompts, want archived with 2", now.Status, len(now.Prompts))
			}
			diffJob(t, "CreateJob replay result", now, got)
			wantAbsent(t, s, "p1", "j2")
		}},
		{"CreateWithOtherHashIsMismatch", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			orig := mustCreateJob(t, s, keyed(NewJob("p1", "j1", At(0)), "k", "req"))
			_, _, err := s.CreateJob(t.Context(), keyed(NewJob("p1", "j2", At(time.Minute)), "k", "other req"))
			wantErr(t, "CreateJob with reused key", err, store.ErrIdempotencyMismatch)
			wantAbsent(t, s, "p1", "j2")
			diffJob(t, "Job j1", orig, mustJob(t, s, "p1", "j1"))
			// The mismatch did not overwrite the recorded hash.
			_, replayed, err := s.CreateJob(t.Context(), keyed(NewJob("p1", "j3", At(2*time.Minute)), "k", "req"))
			must(t, "CreateJob replay after mismatch", err)
			if !replayed {
				t.Errorf("CreateJob replay after mismatch: replayed = false, want true")
			}
			wantAbsent(t, s, "p1", "j3")
		}},
		{"KeysArePerProject", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustProject(t, s, "p2")
			j1 := mustCreateJob(t, s, keyed(NewJob("p1", "j1", At(0)), "k", "req"))
			j2 := mustCreateJob(t, s, keyed(NewJob("p2", "j2", At(0)), "k", "req"))
			diffJob(t, "Job j1", j1, mustJob(t, s, "p1", "j1"))
			diffJob(t, "Job j2", j2, mustJob(t, s, "p2", "j2"))
			// Also with different hashes: no mismatch across projects.
			mustCreateJob(t, s, keyed(NewJob("p2", "j3", At(0)), "k2", "req A"))
			mustCreateJob(t, s, keyed(NewJob("p1", "j4", At(0)), "k2", "req B"))
		}},
		{"KeysAreSharedByCreateAndAddPrompt", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			orig := mustCreateJob(t, s, keyed(NewJob("p1", "j1", At(0)), "k-create", "create req"))
			_, _, err := s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "more", At(time.Minute), "k-create", "prompt req"))
			wantErr(t, "AddPrompt with the key of a create", err, store.ErrIdempotencyMismatch)
			diffJob(t, "Job j1 after refused prompt", orig, mustJob(t, s, "p1", "j1"))

			_, replayed, err := s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "more", At(2*time.Minute), "k-prompt", "prompt req"))
			must(t, "AddPrompt with a fresh key", err)
			if replayed {
				t.Errorf("AddPrompt with a fresh key: replayed = true")
			}
			_, _, err = s.CreateJob(t.Context(), keyed(NewJob("p1", "j2", At(3*time.Minute)), "k-prompt", "create req 2"))
			wantErr(t, "CreateJob with the key of a prompt", err, store.ErrIdempotencyMismatch)
			wantAbsent(t, s, "p1", "j2")
		}},
		{"PromptReplayAppendsNothing", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			first, replayed, err := s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "more", At(time.Minute), "k", "req"))
			must(t, "AddPrompt", err)
			if replayed {
				t.Errorf("AddPrompt: replayed = true for a new key")
			}
			got, replayed, err := s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "more", At(2*time.Minute), "k", "req"))
			must(t, "AddPrompt replay", err)
			if !replayed {
				t.Errorf("AddPrompt replay: replayed = false, want true")
			}
			diffJob(t, "AddPrompt replay result", first, got)
			diffJob(t, "Job after replay", first, mustJob(t, s, "p1", "j1"))
		}},
		{"PromptReplayReturnsJobAsItIsNow", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			_, _, err := s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "more", At(time.Minute), "k", "req"))
			must(t, "AddPrompt", err)
			now := mustAddPrompt(t, s, "p1", "j1", "even more", At(2*time.Minute))
			got, replayed, err := s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "more", At(3*time.Minute), "k", "req"))
			must(t, "AddPrompt replay", err)
			if !replayed {
				t.Errorf("AddPrompt replay: replayed = false, want true")
			}
			if len(now.Prompts) != 3 {
				t.Fatalf("Job has %d prompts, want 3", len(now.Prompts))
			}
			diffJob(t, "AddPrompt replay result", now, got)
			diffJob(t, "Job after replay", now, mustJob(t, s, "p1", "j1"))
		}},
		{"PromptWithOtherHashIsMismatch", func(t *testing.T, s store.Store) {
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "j1", At(0)))
			want, _, err := s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "more", At(time.Minute), "k", "req"))
			must(t, "AddPrompt", err)
			_, _, err = s.AddPrompt(t.Context(), keyedPrompt("p1", "j1", "different", At(2*time.Minute), "k", "other req"))
			wantErr(t, "AddPrompt with reused key", err, store.ErrIdempotencyMismatch)
			diffJob(t, "Job after mismatch", want, mustJob(t, s, "p1", "j1"))
		}},
		{"RefusedWriteRecordsNoKey", func(t *testing.T, s store.Store) {
			// The key is recorded "in the same transaction" as the write:
			// a write that fails leaves the key unused, so the client may
			// use it for another request.
			mustProject(t, s, "p1")
			mustCreateJob(t, s, NewJob("p1", "taken", At(0)))

			_, _, err := s.CreateJob(t.Context(), keyed(NewJob("p1", "taken", At(time.Minute)), "k1", "req 1"))
			wantErr(t, "CreateJob with taken ID", err, store.ErrConflict)
			mustCreateJob(t, s, keyed(NewJob("p1", "j1", At(time.Minute)), "k1", "req 1 changed"))

			_, _, err = s.CreateJob(t.Context(), keyed(NewJob("p-later", "j2", At(time.Minute)), "k2", "req 2"))
			wantErr(t, "CreateJob in unknown project", err, store.ErrNotFound)
			mustProject(t, s, "p-later")
			mustCreateJob(t, s, keyed(NewJob("p-later", "j2", At(time.Minute)), "k2", "req 2"))

			_, _, err = s.AddPrompt(t.Context(), keyedPrompt("p1", "missing", "x", At(time.Minute), "k3", "req 3"))
			wantErr(t, "AddPrompt to missing job", err, store.ErrNotFound)
			mustCreateJob(t, s, keyed(NewJob("p1", "j3", At(time.Minute)), "k3", "req 3 changed"))

			_, err = s.ArchiveJob(t.Context(), "p1", "taken", At(time.Minute))
			must(t, "ArchiveJob", err)
			_, _, err = s.AddPrompt(t.Context(), keyedPrompt("p1", "taken", "x", At(2*time.Minute), "k4", "req 4"))
			wantErr(t, "AddPrompt to archived job", err, store.ErrArchived)
			mustCreateJob(t, s, keyed(NewJob("p1", "j4", At(2*time.Minute)), "k4", "req 4 changed"))
		}},
	})
}
