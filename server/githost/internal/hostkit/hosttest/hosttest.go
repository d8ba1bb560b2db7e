// Package hosttest is the conformance suite of the pull-request hosts: the
// behaviour the engine relies on from every engine.PullRequests that talks
// to an API (one pull request per job, whatever races and retries happen;
// permanent and transient errors told apart; the token never shown). Each
// host's tests call Run with a fake of its API, so the hosts are held to
// the same rules by the same tests, and a host's own tests keep only what
// is particular to its API. For the same reason the fakes share their HTTP
// front (Server), and the hosts' own tests share their fixtures and checks.
package hosttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
)

// Op names a kind of request Ensure sends.
type Op int

const (
	// List is listing the open pull requests.
	List Op = iota
	// Create is opening a pull request.
	Create
)

// String names o in subtest names.
func (o Op) String() string {
	if o == Create {
		return "create"
	}
	return "list"
}

// Answer is an answer a fake gives instead of its own.
type Answer struct {
	Op     Op
	Status int
	Header http.Header
	// Body is sent as JSON; nil means the host's usual error body for
	// Status.
	Body any
}

// Failure is an answer of a host's API and what Ensure must make of it.
type Failure struct {
	Name   string
	Answer Answer
	// Permanent is whether the error must be marked engine.Permanent.
	Permanent bool
	// Mention is a text the error must contain.
	Mention string
}

// Options configure the host under test. Exactly one of Token and TokenFunc
// is set.
type Options struct {
	Token     string
	TokenFunc func(ctx context.Context) (string, error)
	// Logger is to receive everything, debug records included.
	Logger *slog.Logger
}

// Fake is one host's API double, fresh for each test, with the repository
// of Spec holding no pull request and "main" as its default branch. Its
// methods are safe to call while a host talks to it.
type Fake interface {
	// New returns the host under test, configured for the fake.
	New(t *testing.T, o Options) engine.PullRequests
	// Config is the host's configuration for o, for the printing checks.
	Config(o Options) any
	// Token is the one token the fake accepts.
	Token() string
	// Spec is a job's pull request into "main" of a repository the fake
	// holds.
	Spec() engine.PullRequestSpec
	// Missing is the clone URL of a repository the fake does not hold,
	// on the fake's host.
	Missing() string
	// AddOpen stores an open pull request from head into base as if
	// someone else had opened it, and returns its web URL.
	AddOpen(head, base string) string
	// BeforeCreate makes the fake call fn inside every create request,
	// before it checks whether the pull request already exists.
	BeforeCreate(fn func())
	// HideFromList makes every later list answer empty, as a list that
	// lags behind the host's writes would.
	HideFromList()
	// Fail makes every later request of a.Op answer as a says.
	Fail(a Answer)
	// Requests counts the requests the fake received; Creates counts the
	// create requests among them.
	Requests() int
	Creates() int
	// Open counts the open pull requests the fake holds.
	Open() int
	// Close shuts the fake's server: requests then fail to connect.
	Close()
}

// Run runs the suite against the host that newFake's fakes serve. extra
// adds answers particular to that host's API (its rate limits, its error
// bodies) to the ones every host must classify alike.
func Run(t *testing.T, newFake func(t *testing.T) Fake, extra ...Failure) {
	t.Run("FindsExisting", func(t *testing.T) { testFindsExisting(t, newFake(t)) })
	t.Run("Creates", func(t *testing.T) { testCreates(t, newFake(t)) })
	t.Run("FullRefAsBase", func(t *testing.T) { testFullRefAsBase(t, newFake(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newFake(t)) })
	t.Run("LostRace", func(t *testing.T) { testLostRace(t, newFake(t)) })
	t.Run("LostRaceNotListed", func(t *testing.T) { testLostRaceNotListed(t, newFake(t)) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, newFake, extra) })
	t.Run("BadSpec", func(t *testing.T) { testBadSpec(t, newFake(t)) })
	t.Run("Cancelled", func(t *testing.T) { testCancelled(t, newFake(t)) })
	t.Run("CancelledDuringRequest", func(t *testing.T) { testCancelledDuringRequest(t, newFake(t)) })
	t.Run("TokenFuncPerRequest", func(t *testing.T) { testTokenFuncPerRequest(t, newFake(t)) })
	t.Run("TokenNeverShown", func(t *testing.T) { testTokenNeverShown(t, newFake(t)) })
}

// LogBuffer collects a host's log output; the host may log from several
// goroutines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it is safe for concurrent use.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger is a logger into b that keeps every record, debug ones included.
func (b *LogBuffer) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newHost(t *testing.T, f Fake, logs *LogBuffer) engine.PullRequests {
	t.Helper()
	o := Options{Token: f.Token()}
	if logs != nil {
		o.Logger = logs.Logger()
	}
	return f.New(t, o)
}

func testFindsExisting(t *testing.T, f Fake) {
	spec := f.Spec()
	// Look-alikes that must not be taken: another base, another branch.
	f.AddOpen(spec.Branch, "release-1.x")
	f.AddOpen("docsapi/job_999", "main")
	want := f.AddOpen(spec.Branch, "main")
	if got := MustEnsure(t, newHost(t, f, nil), spec); got != want {
		t.Errorf("URL = %q, want the open pull request's %q", got, want)
	}
	if n := f.Creates(); n != 0 {
		t.Errorf("%d creates, want none", n)
	}
}

func testCreates(t *testing.T, f Fake) {
	logs := &LogBuffer{}
	h := newHost(t, f, logs)
	first := MustEnsure(t, h, f.Spec())
	if n := f.Creates(); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
	if !strings.Contains(logs.String(), "opened") {
		t.Errorf("the new pull request is not logged:\n%s", logs)
	}
	// A retry or a follow-up: same branch, maybe new words.
	spec := f.Spec()
	spec.Title = "Docs: a follow-up"
	if second := MustEnsure(t, h, spec); second != first {
		t.Errorf("second URL %q, want the first one %q", second, first)
	}
	if n, open := f.Creates(), f.Open(); n != 1 || open != 1 {
		t.Errorf("%d creates and %d open pull requests, want 1 and 1", n, open)
	}
}

func testFullRefAsBase(t *testing.T, f Fake) {
	spec := f.Spec()
	want := f.AddOpen(spec.Branch, "main")
	spec.Base = "refs/heads/main"
	if got := MustEnsure(t, newHost(t, f, nil), spec); got != want {
		t.Errorf("URL = %q, want the one into main %q", got, want)
	}
}

func testConcurrent(t *testing.T, f Fake) {
	h := newHost(t, f, nil)
	urls := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range urls {
		wg.Go(func() { urls[i], errs[i] = h.Ensure(context.Background(), f.Spec()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Ensure %d: %v", i, err)
		}
	}
	if urls[0] != urls[1] {
		t.Errorf("URLs differ: %q and %q", urls[0], urls[1])
	}
	if n := f.Open(); n != 1 {
		t.Errorf("%d open pull requests, want 1", n)
	}
}

func testLostRace(t *testing.T, f Fake) {
	spec := f.Spec()
	var mu sync.Mutex
	var other string
	f.BeforeCreate(func() {
		// Another run opens it between our list and our create.
		mu.Lock()
		defer mu.Unlock()
		other = f.AddOpen(spec.Branch, "main")
	})
	logs := &LogBuffer{}
	got := MustEnsure(t, newHost(t, f, logs), spec)
	mu.Lock()
	defer mu.Unlock()
	if got != other {
		t.Errorf("URL = %q, want the other run's %q", got, other)
	}
	if n, open := f.Creates(), f.Open(); n != 1 || open != 1 {
		t.Errorf("%d creates and %d open pull requests, want 1 and 1", n, open)
	}
	if !strings.Contains(logs.String(), "another run") {
		t.Errorf("the race is not logged:\n%s", logs)
	}
}

func testLostRaceNotListed(t *testing.T, f Fake) {
	spec := f.Spec()
	f.BeforeCreate(func() {
		f.AddOpen(spec.Branch, "main")
		f.HideFromList()
	})
	url, err := newHost(t, f, nil).Ensure(context.Background(), spec)
	if err == nil {
		t.Fatalf("Ensure = %q without a listed pull request", url)
	}
	if engine.IsPermanent(err) {
		t.Errorf("error %v is permanent; a retry will find the pull request", err)
	}
}

// failure is one way Ensure can fail, and whether a retry could help.
type failure struct {
	name      string
	permanent bool
	mention   string
	// setup readies the fake and returns the host and spec to call.
	setup func(t *testing.T, f Fake) (engine.PullRequests, engine.PullRequestSpec)
}

func failures() []failure {
	status := func(op Op, code int, permanent bool) failure {
		return answered(Failure{Name: fmt.Sprintf("%d on %s", code, op), Answer: Answer{Op: op, Status: code}, Permanent: permanent, Mention: fmt.Sprint(code)})
	}
	withToken := func(name string, permanent bool, mention string, fn func(context.Context) (string, error)) failure {
		return failure{name: name, permanent: permanent, mention: mention,
			setup: func(t *testing.T, f Fake) (engine.PullRequests, engine.PullRequestSpec) {
				return f.New(t, Options{TokenFunc: fn}), f.Spec()
			}}
	}
	return []failure{
		status(List, 401, true), status(List, 403, true), status(List, 404, true),
		status(Create, 403, true), status(Create, 422, true),
		status(List, 500, false), status(Create, 502, false), status(List, 503, false),
		status(List, 429, false), status(Create, 409, false),
		{name: "wrong token", permanent: true, mention: "401",
			setup: func(t *testing.T, f Fake) (engine.PullRequests, engine.PullRequestSpec) {
				return f.New(t, Options{Token: f.Token() + "x"}), f.Spec()
			}},
		{name: "missing repository", permanent: true, mention: "404",
			setup: func(t *testing.T, f Fake) (engine.PullRequests, engine.PullRequestSpec) {
				spec := f.Spec()
				spec.Repository, spec.Base = f.Missing(), ""
				return newHost(t, f, nil), spec
			}},
		{name: "network", permanent: false,
			setup: func(t *testing.T, f Fake) (engine.PullRequests, engine.PullRequestSpec) {
				h := newHost(t, f, nil)
				f.Close() // nothing listens any more: connection refused
				return h, f.Spec()
			}},
		withToken("token function fails", false, "vault sealed", func(context.Context) (string, error) {
			return "", errors.New("vault sealed")
		}),
		withToken("token function fails for good", true, "token revoked", func(context.Context) (string, error) {
			return "", engine.Permanent(errors.New("token revoked"))
		}),
		withToken("empty token from function", true, "empty token", func(context.Context) (string, error) {
			return "", nil
		}),
	}
}

// answered is the failure of a fake that answers as fl says.
func answered(fl Failure) failure {
	return failure{name: fl.Name, permanent: fl.Permanent, mention: fl.Mention,
		setup: func(t *testing.T, f Fake) (engine.PullRequests, engine.PullRequestSpec) {
			f.Fail(fl.Answer)
			return newHost(t, f, nil), f.Spec()
		}}
}

func testErrors(t *testing.T, newFake func(t *testing.T) Fake, extra []Failure) {
	all := failures()
	for _, fl := range extra {
		all = append(all, answered(fl))
	}
	for _, tt := range all {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			h, spec := tt.setup(t, f)
			url, err := h.Ensure(context.Background(), spec)
			if err == nil {
				t.Fatalf("Ensure = %q, want an error", url)
			}
			if got := engine.IsPermanent(err); got != tt.permanent {
				t.Errorf("IsPermanent = %t, want %t; error: %v", got, tt.permanent, err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func testBadSpec(t *testing.T, f Fake) {
	h := newHost(t, f, nil)
	for name, edit := range map[string]func(*engine.PullRequestSpec){
		"no branch":            func(s *engine.PullRequestSpec) { s.Branch = "" },
		"no title":             func(s *engine.PullRequestSpec) { s.Title = "" },
		"bad repository":       func(s *engine.PullRequestSpec) { s.Repository = "not a url" },
		"local repository":     func(s *engine.PullRequestSpec) { s.Repository = "/srv/git/docs.git" },
		"repository elsewhere": func(s *engine.PullRequestSpec) { s.Repository = "https://git.elsewhere.example/o/r.git" },
	} {
		t.Run(name, func(t *testing.T) {
			spec := f.Spec()
			edit(&spec)
			if _, err := h.Ensure(context.Background(), spec); !engine.IsPermanent(err) {
				t.Errorf("error %v, want a permanent one", err)
			}
		})
	}
	if n := f.Requests(); n != 0 {
		t.Errorf("%d requests sent for specs that cannot work", n)
	}
}

func testCancelled(t *testing.T, f Fake) {
	h := newHost(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.Ensure(ctx, f.Spec())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if engine.IsPermanent(err) {
		t.Errorf("cancellation %v is permanent", err)
	}
	if n := f.Requests(); n != 0 {
		t.Errorf("%d requests sent with a cancelled context", n)
	}
}

func testCancelledDuringRequest(t *testing.T, f Fake) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	var once sync.Once
	f.BeforeCreate(func() {
		once.Do(func() { close(arrived) })
		<-release
	})
	h := newHost(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.Ensure(ctx, f.Spec())
		done <- err
	}()
	<-arrived
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ensure did not return after its context was cancelled")
	}
}

func testTokenFuncPerRequest(t *testing.T, f Fake) {
	type ctxKey struct{}
	var mu sync.Mutex
	var n int
	h := f.New(t, Options{TokenFunc: func(ctx context.Context) (string, error) {
		if ctx.Value(ctxKey{}) != "job_123" {
			return "", errors.New("the token function did not get Ensure's context")
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		return f.Token(), nil
	}})
	ctx := context.WithValue(context.Background(), ctxKey{}, "job_123")
	if _, err := h.Ensure(ctx, f.Spec()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := f.Requests(); n != want {
		t.Errorf("token function called %d times for %d requests", n, want)
	}
}

func testTokenNeverShown(t *testing.T, f Fake) {
	token := f.Token()
	logs := &LogBuffer{}
	h := newHost(t, f, logs)
	var errs []error
	try := func(h engine.PullRequests, spec engine.PullRequestSpec) {
		if _, err := h.Ensure(context.Background(), spec); err != nil {
			errs = append(errs, err)
		}
	}
	// Success, every kind of failure, and repository URLs that carry the
	// token themselves.
	try(h, f.Spec())
	try(h, f.Spec())
	spec := f.Spec()
	spec.Repository = "https://x-access-token:" + token + "@git.elsewhere.example/o/r.git"
	try(h, spec)
	spec.Repository = strings.Replace(f.Missing(), "://", "://oauth2:"+token+"@", 1)
	spec.Base = ""
	try(h, spec)
	try(f.New(t, Options{Token: token + "x", Logger: logs.Logger()}), f.Spec())
	f.Fail(Answer{Op: List, Status: 500})
	try(h, f.Spec())
	f.Close()
	try(h, f.Spec())

	if len(errs) < 5 {
		t.Fatalf("only %d failures happened: %v", len(errs), errs)
	}
	for _, err := range errs {
		if strings.Contains(err.Error(), token) {
			t.Errorf("an error shows the token: %v", err)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "githost: request") || !strings.Contains(out, "opened") {
		t.Fatalf("the logs lack the records this test checks:\n%s", out)
	}
	if strings.Contains(out, token) {
		t.Errorf("the logs show the token:\n%s", out)
	}
	cfg := f.Config(Options{Token: token})
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v %+v", h, h)} {
		if strings.Contains(s, token) {
			t.Errorf("a printed form shows the token: %s", s)
		}
	}
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("config", slog.Any("cfg", cfg))
	if strings.Contains(b.String(), token) {
		t.Errorf("slog shows the token: %s", b.String())
	}
}
