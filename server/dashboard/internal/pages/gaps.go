package pages

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/docsapi/docsapi-go/server/gaps"
	"github.com/docsapi/docsapi-go/server/store"
)

// GapsPage is what readers looked for and did not find over a period,
// grouped per page or topic (package gaps), each gap with the jobs made
// from it and what retrieval finds for it now; for a key that may write,
// the form that makes a job from a selection.
type GapsPage struct {
	Frame
	Period
	Groups []GapGroup
	// More says more groups were found than are listed; Truncated that a
	// read stopped at its bound.
	More, Truncated bool
	// CanWrite says the key has the write scope. The selection's
	// checkboxes and the job form depend on it and on nothing a caller
	// could set apart from it.
	CanWrite bool
	// MaxSelected is the most gaps one job is made from.
	MaxSelected int
	// IdempotencyKey is the job form's, new with each rendering, so that
	// the same form sent twice makes one job.
	IdempotencyKey string
}

// GapGroup is a page's or a topic's gaps.
type GapGroup struct {
	Page, Topic string
	// PageURL is the page's own overview, "" for a topic.
	PageURL string
	Score   int64
	Gaps    []GapRow
}

// GapRow is one gap as the page shows it.
type GapRow struct {
	gaps.Entry
	ID    string // the row's element ID (GapID)
	Value string // the checkbox's value (GapValue)
	Jobs  []GapJob
}

// GapJob is a job made from a gap, with its page's URL.
type GapJob struct {
	gaps.LinkedJob
	URL string
}

// GapID is the element ID of a gap's row, which the pages of jobs made
// from it link to: a hash, since a key may hold any character.
func GapID(kind store.GapKind, key string) string {
	sum := sha256.Sum256([]byte(string(kind) + "\x00" + key))
	return "gap-" + hex.EncodeToString(sum[:8])
}

// GapValue is the value a gap's checkbox sends: its kind, a colon, its
// key (kinds hold no colon).
func GapValue(kind store.GapKind, key string) string { return string(kind) + ":" + key }

// KindLabel names a kind of gap for people.
func KindLabel(k store.GapKind) string {
	switch k {
	case store.GapQuestion:
		return "Unanswered question"
	case store.GapSearch:
		return "Search, nothing opened"
	case store.GapPage:
		return "Page voted down"
	}
	return string(k)
}

// JobGap is a gap a job was made from, with the URL of its row on the
// gaps page.
type JobGap struct {
	Kind store.GapKind
	Key  string
	URL  string
}

func (GapsPage) file() string { return "gaps.html" }
