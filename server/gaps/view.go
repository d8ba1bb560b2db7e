package gaps

import (
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// View is a report as the API and the dashboard show it: each gap with
// the jobs made from it and, once one of them completed, what retrieval
// finds for it now.
type View struct {
	From, To  time.Time // the range read, [From, To)
	Groups    []ViewGroup
	Truncated bool // an input read stopped at its bound
	// More says the report held more groups than the view shows.
	More bool
}

// ViewGroup is a Group with its gaps' jobs.
type ViewGroup struct {
	Page, Topic string
	Score       int64
	Gaps        []Entry
}

// Entry is a gap with the jobs linked to it.
type Entry struct {
	Gap
	// Jobs are the jobs made from the gap, the latest linked first, at
	// most MaxJobsShown.
	Jobs []LinkedJob
	// Retrieval is what the index finds for the gap's text now: nil until
	// the index was updated after a linked job completed, so that the
	// job's change may have reached it (and for pages, which have no text
	// to search).
	Retrieval *Retrieval
}

// MaxJobsShown bounds the jobs a view reads and shows per gap.
const MaxJobsShown = 5

// LinkedJob is a job made from a gap, as it stands.
type LinkedJob struct {
	ID       string
	Status   store.JobStatus
	PRLink   string
	LinkedAt time.Time
}

// Retrieval is the index's best section for a gap's text: Found false
// when it finds none.
type Retrieval struct {
	Found bool
	Hit   store.DocHit // when Found
	// IndexCommit is the commit the index held when it was asked, and
	// IndexUpdatedAt when that index was written.
	IndexCommit    string
	IndexUpdatedAt time.Time
}

// Ref names a gap: its kind and key.
type Ref struct {
	Kind store.GapKind
	Key  string
}

// RefOf returns g's Ref.
func RefOf(g Gap) Ref { return Ref{Kind: g.Kind, Key: g.Key} }

// Known reports whether k is a kind of gap.
func Known(k store.GapKind) bool {
	return k == store.GapQuestion || k == store.GapSearch || k == store.GapPage
}
