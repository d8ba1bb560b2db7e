package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/sqlite"
)

// The attack: 60 follow-ups of 31,000 characters (1.86 MB) to one job, all
// accepted, and all handed to the agent at every run. A job's history is
// capped, in prompts and in characters; follow-ups past a cap are refused
// with a 400 naming it and stored nowhere, on either backend, however many
// are sent at once.

// onBackends runs test on a server over SQLite, and over PostgreSQL where
// DOCSAPI_TEST_POSTGRES_URL names a server; each env test opens has a
// database of its own.
func onBackends(t *testing.T, test func(t *testing.T, open func(mutate ...func(*server.Config)) *env)) {
	t.Run("sqlite", func(t *testing.T) {
		test(t, func(mutate ...func(*server.Config)) *env { return newEnv(t, mutate...) })
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("DOCSAPI_TEST_POSTGRES_URL") == "" {
			t.Skip("DOCSAPI_TEST_POSTGRES_URL is not set; see .ci/postgres.sh")
		}
		test(t, func(mutate ...func(*server.Config)) *env {
			dbURL := postgresDatabase(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st, err := postgres.Open(ctx, dbURL)
			if err != nil {
				t.Fatalf("postgres.Open: %v", err)
			}
			t.Cleanup(func() { st.Close() })
			return newEnvOn(t, st, mutate...)
		})
	})
}

// postgresDatabase makes an empty database on the server
// DOCSAPI_TEST_POSTGRES_URL names, dropped when the test ends, and returns
// its URL; without the variable the test is skipped.
func postgresDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("DOCSAPI_TEST_POSTGRES_URL")
	if admin == "" {
		t.Skip("DOCSAPI_TEST_POSTGRES_URL is not set; see .ci/postgres.sh")
	}
	b := make([]byte, 8)
	rand.Read(b)
	name := "docsapi_server_" + hex.EncodeToString(b)
	exec := func(stmt string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, stmt)
		return err
	}
	// The name is ours and made of [a-z0-9_]: no quoting needed.
	if err := exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if err := exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// promptBody is a {"prompt"} body of n characters.
func promptBody(n int) string {
	return `{"prompt":"` + strings.Repeat("a", n) + `"}`
}

// createJobOf creates a job in alpha with a prompt of n characters.
func createJobOf(t *testing.T, e *env, n int) string {
	t.Helper()
	resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job", promptBody(n))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	return servertest.JobOf(t, body)["id"].(string)
}

// storedPrompts returns how many prompts, and characters in all, the
// store holds for the job.
func storedPrompts(t *testing.T, e *env, id string) (prompts, chars int) {
	t.Helper()
	j, err := e.Store.Job(context.Background(), "alpha", id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range j.Prompts {
		chars += len([]rune(p.Text))
	}
	return len(j.Prompts), chars
}

func TestFollowUpsPastTheCapsAreRefused(t *testing.T) {
	onBackends(t, func(t *testing.T, open func(...func(*server.Config)) *env) {
		e := open()

		// The attack as found: 60 follow-ups of 31,000 characters. Three
		// fit the default cap of 128,000 characters with the first prompt.
		id := createJobOf(t, e, 31000)
		accepted := 0
		for i := range 60 {
			resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", promptBody(31000))
			if resp.StatusCode == http.StatusOK {
				accepted++
				continue
			}
			want := fmt.Sprintf("invalid request: job %q: this prompt of 31000 characters would bring the job's prompts to %d characters, and the cap is 128000 characters per job; start a new job for further instructions",
				id, 31000*(accepted+2))
			if resp.StatusCode != http.StatusBadRequest || servertest.ErrorOf(t, body) != want {
				t.Fatalf("follow-up %d: %d %s, want 400 %q", i+1, resp.StatusCode, body, want)
			}
		}
		if n, chars := storedPrompts(t, e, id); accepted != 3 || n != 4 || chars != 124000 {
			t.Errorf("%d follow-ups accepted; the job holds %d prompts of %d characters; want 3, and 4 of 124000", accepted, n, chars)
		}

		// Short follow-ups meet the cap on prompts: 50, the first included.
		id = createJobOf(t, e, 10)
		accepted = 0
		for i := range 60 {
			resp, body := e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", promptBody(10))
			if resp.StatusCode == http.StatusOK {
				accepted++
				continue
			}
			want := fmt.Sprintf("invalid request: job %q holds 50 prompts, and the cap is 50 prompts per job; start a new job for further instructions", id)
			if resp.StatusCode != http.StatusBadRequest || servertest.ErrorOf(t, body) != want {
				t.Fatalf("short follow-up %d: %d %s, want 400 %q", i+1, resp.StatusCode, body, want)
			}
		}
		if n, _ := storedPrompts(t, e, id); accepted != 49 || n != 50 {
			t.Errorf("%d short follow-ups accepted; the job holds %d prompts; want 49 and 50", accepted, n)
		}
	})
}

func TestConcurrentFollowUpsNeverPassTheCaps(t *testing.T) {
	onBackends(t, func(t *testing.T, open func(...func(*server.Config)) *env) {
		// Each job has room for 3 more follow-ups; 16 are sent at once,
		// in a few rounds.
		e := open(func(c *server.Config) {
			c.MaxPromptLength, c.MaxJobPromptLength = 100, 400
		})
		for _, c := range []struct {
			name       string
			e          *env
			maxPrompts int
		}{
			{"prompts", open(func(c *server.Config) { c.MaxJobPrompts = 4 }), 4},
			{"characters", e, 50},
		} {
			for round := range 3 {
				id := createJobOf(t, c.e, 100)
				statuses := make([]int, 16)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range statuses {
					wg.Go(func() {
						<-start
						resp, _ := c.e.Do("rw", "POST", "/v2/agent/alpha/job/"+id+"/message", promptBody(100))
						statuses[i] = resp.StatusCode
					})
				}
				close(start)
				wg.Wait()
				counts := map[int]int{}
				for _, s := range statuses {
					counts[s]++
				}
				n, chars := storedPrompts(t, c.e, id)
				if counts[http.StatusOK] != 3 || counts[http.StatusBadRequest] != 13 || n != 4 || chars != 400 {
					t.Errorf("%s, round %d: answers %v; the job holds %d prompts of %d characters; want 3 accepted, 13 refused, 4 prompts of 400",
						c.name, round, counts, n, chars)
				}
			}
		}
	})
}

// The caps' settings are checked: none may be negative, and a job's whole
// history must hold at least one prompt of the longest length.
func TestNewRefusesBadFollowUpCaps(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tc := range []struct {
		cfg  server.Config
		want string
	}{
		{server.Config{MaxJobPrompts: -1}, "Config.MaxJobPrompts must not be negative"},
		{server.Config{MaxJobPromptLength: -1}, "Config.MaxJobPromptLength must not be negative"},
		{server.Config{MaxJobPromptLength: 31999}, "Config.MaxJobPromptLength (31999 characters) is below Config.MaxPromptLength (32000)"},
		{server.Config{MaxPromptLength: 10, MaxJobPromptLength: 9}, "Config.MaxJobPromptLength (9 characters) is below Config.MaxPromptLength (10)"},
	} {
		tc.cfg.Store = st
		if _, err := server.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error saying %q", tc.cfg, err, tc.want)
		}
	}
	// A longest prompt above the default history raises the history's
	// default with it.
	if _, err := server.New(server.Config{Store: st, MaxPromptLength: 200000}); err != nil {
		t.Errorf("New with MaxPromptLength 200000: %v", err)
	}
}

// The SDK reads the refusal as it reads any 400: an *APIError that
// matches ErrBadRequest, with the server's message naming the cap.
func TestSDKSeesTheFollowUpCap(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.MaxJobPrompts = 2 })
	ctx := context.Background()
	client := e.client("rw")
	job, err := client.AgentJobs.Create(ctx, "", docsapi.CreateJobParams{Prompt: "Document the flag"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.AgentJobs.SendMessage(ctx, "", job.ID, docsapi.SendMessageParams{Prompt: "And an example"}); err != nil {
		t.Fatal(err)
	}
	_, err = client.AgentJobs.SendMessage(ctx, "", job.ID, docsapi.SendMessageParams{Prompt: "And another"})
	var apiErr *docsapi.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, docsapi.ErrBadRequest) || apiErr.StatusCode != http.StatusBadRequest ||
		!strings.Contains(apiErr.Message, "the cap is 2 prompts per job") {
		t.Fatalf("SendMessage past the cap: %v, want an *APIError 400 naming the cap", err)
	}
}
