package servertest

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ulid"
	"github.com/docsapi/docsapi-go/server/store"
)

// Ask is an exchange with the assistant that Env.Ask stores, as the
// assistant endpoint would have stored it.
type Ask struct {
	Project string // "alpha" when ""
	// Thread is the thread the question continues; "" opens a new one,
	// by Caller.
	Thread           string
	Caller           store.CallerKind // web when ""
	Question, Answer string
	Unanswered       bool // the reply found nothing in the docs
	Clarifying       bool // the reply is a clarifying question
	Sources          []store.Source
	PageURL          string
	// At is when the question was asked (the clock's time when zero);
	// the reply follows it by a second.
	At time.Time
}

// Ask stores a through the store's AddExchange and returns the exchange
// stored.
func (e *Env) Ask(a Ask) store.Exchange {
	e.T.Helper()
	if a.Project == "" {
		a.Project = "alpha"
	}
	if a.Caller == "" {
		a.Caller = store.CallerWeb
	}
	if a.At.IsZero() {
		a.At = e.Clock.Now()
	}
	a.At = a.At.UTC().Truncate(time.Millisecond)
	x := store.Exchange{
		ID: ulid.New(a.At), QuestionID: ulid.New(a.At), ProjectID: a.Project, ThreadID: a.Thread,
		Question: a.Question, AskedAt: a.At, Answer: a.Answer, AnsweredAt: a.At.Add(time.Second),
		ResponseType: store.ResponseAnswer, Resolution: store.Answered, Sources: a.Sources, PageURL: a.PageURL, Caller: a.Caller,
	}
	if a.Unanswered {
		x.Resolution = store.Unanswered
	}
	if a.Clarifying {
		x.ResponseType = store.ResponseClarifyingQuestion
	}
	var th *store.Thread
	if a.Thread == "" {
		key := sha256.Sum256([]byte("key of " + x.QuestionID))
		x.ThreadID = ulid.New(a.At)
		th = &store.Thread{ID: x.ThreadID, ProjectID: a.Project, KeyHash: key[:], Fp: "anonymous", Caller: a.Caller, CreatedAt: a.At}
	}
	if err := e.Store.AddExchange(context.Background(), x, th); err != nil {
		e.T.Fatalf("AddExchange: %v", err)
	}
	return x
}
