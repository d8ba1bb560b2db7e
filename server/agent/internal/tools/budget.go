package tools

import (
	"errors"
	"fmt"
)

// Defaults of Limits.
const (
	DefaultMaxFileBytes     = 256 << 10
	DefaultMaxChangedBytes  = 1 << 20
	DefaultMaxListEntries   = 500
	DefaultMaxSearchMatches = 100
)

// Limits bound what the tools read, write and return. Zero fields take the
// defaults.
type Limits struct {
	// MaxFileBytes is the largest file that is read, searched, edited or
	// written. Documentation pages are far smaller; anything larger is
	// generated or binary and not worth the model's context.
	MaxFileBytes int64
	// MaxChangedBytes bounds the total size of the changes of a run (see
	// Workspace.Changed), so a model stuck in a loop cannot rewrite the
	// repository.
	MaxChangedBytes int64
	// MaxListEntries bounds the paths one list_files call returns.
	MaxListEntries int
	// MaxSearchMatches bounds the lines one search call returns.
	MaxSearchMatches int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxChangedBytes <= 0 {
		l.MaxChangedBytes = DefaultMaxChangedBytes
	}
	if l.MaxListEntries <= 0 {
		l.MaxListEntries = DefaultMaxListEntries
	}
	if l.MaxSearchMatches <= 0 {
		l.MaxSearchMatches = DefaultMaxSearchMatches
	}
	return l
}

// ErrChangeLimit is returned by Call when a change would take the run past
// Limits.MaxChangedBytes. The change is not made.
var ErrChangeLimit = errors.New("the changes exceed the limit of the run")

// Changed returns the bytes changed so far: for each write, edit or delete,
// the bytes removed plus the bytes added, after setting aside the text that
// the old and new content share at their start and end. Rewriting a whole
// page to fix one word therefore costs about one word, while a deletion
// costs the size of what is gone.
func (w *Workspace) Changed() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// charge books n changed bytes, or refuses them when the budget would be
// exceeded.
func (w *Workspace) charge(n int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed+n > w.limits.MaxChangedBytes {
		return fmt.Errorf("%w: %d bytes changed, and this change of %d bytes would pass the limit of %d",
			ErrChangeLimit, w.changed, n, w.limits.MaxChangedBytes)
	}
	w.changed += n
	return nil
}

func (w *Workspace) refund(n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed -= n
}

// changeSize is the bytes removed plus the bytes added when old becomes new,
// leaving out their common prefix and suffix. It is exact for one changed
// region and an upper bound otherwise, computed in linear time.
func changeSize(old, new string) int64 {
	prefix := 0
	for prefix < len(old) && prefix < len(new) && old[prefix] == new[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(old)-prefix && suffix < len(new)-prefix && old[len(old)-1-suffix] == new[len(new)-1-suffix] {
		suffix++
	}
	return int64(len(old)-prefix-suffix) + int64(len(new)-prefix-suffix)
}
