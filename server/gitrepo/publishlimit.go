package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// What a job may publish. An agent that writes twenty thousand files, or
// a file of hundreds of megabytes, has not made a documentation change,
// whatever it was asked; pushed, such a branch costs the remote, every
// clone of it and whoever reviews it. Before Publish commits, it measures
// what the job's branch would then propose against its base (as the pull
// request's diff shows it, so that follow-ups cannot publish a little at
// a time past the limit) and refuses, for good, a branch past
// Config.MaxPublishFiles or Config.MaxPublishBytes.
//
// The measure is git's own, over the index that `git add --all` made: one
// entry per file, however the tree was built. Files in new folders, a
// deleted tree and a mode change count file by file; a symbolic link
// counts as a file the size of its target's name, never the target's;
// sizes come from the objects' headers, never from reading a file; and
// the diff is read as git writes it, keeping no more than the limit's
// worth of object ids, however many files it lists.

// publishCount is what a branch proposes against its base.
type publishCount struct {
	files int   // paths added, modified (content, mode or type) or deleted
	bytes int64 // sizes of the files added or whose content changed
}

// checkPublishLimits measures what the branch would propose once the
// index is committed, against its merge base with the job's base, and
// returns a refusal if it passes the limits.
func (w *Workspace) checkPublishLimits(ctx context.Context) error {
	maxFiles, maxBytes := w.repos.cfg.MaxPublishFiles, w.repos.cfg.MaxPublishBytes
	since, err := w.since(ctx, "HEAD")
	if err != nil {
		return err
	}
	tally := &rawTally{keep: maxFiles}
	// Plumbing, which runs no external diff or textconv program; the
	// index against a tree, so nothing in the working tree is read.
	err = w.repos.runTo(ctx, w.spec("commit", nil), tally,
		"diff-index", "--cached", "--raw", "-z", "--no-renames", "--ignore-submodules=none", since, "--")
	if err != nil && tally.err == nil {
		return err // git's own failure, not what it wrote
	}
	if err := tally.finish(); err != nil {
		return err
	}
	count := publishCount{files: tally.files}
	if count.files > maxFiles {
		return refuse("the branch would change %d files (added, modified or deleted, compared with its base), and a job may publish at most %d; nothing was committed or pushed",
			count.files, maxFiles)
	}
	if count.bytes, err = w.blobBytes(ctx, tally.blobs); err != nil {
		return err
	}
	if count.bytes > maxBytes {
		return refuse("the branch would add or change %d bytes of files (%s, compared with its base), and a job may publish at most %d bytes (%s); nothing was committed or pushed",
			count.bytes, sizeText(count.bytes), maxBytes, sizeText(maxBytes))
	}
	return nil
}

// blobBytes returns the size of the files whose contents are blobs, each
// id's size counted as many times as files hold it, as git's objects'
// headers give it.
func (w *Workspace) blobBytes(ctx context.Context, blobs map[string]int) (int64, error) {
	if len(blobs) == 0 {
		return 0, nil
	}
	var ids strings.Builder
	for id := range blobs {
		ids.WriteString(id + "\n")
	}
	spec := w.spec("commit", nil)
	spec.stdin = ids.String()
	out, err := w.repos.run(ctx, spec, "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
	if err != nil {
		return 0, err
	}
	var total int64
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		n, perr := int64(0), error(nil)
		if len(f) == 3 {
			n, perr = strconv.ParseInt(f[2], 10, 64)
		}
		if len(f) != 3 || f[1] != "blob" || perr != nil || n < 0 || blobs[f[0]] == 0 {
			return 0, &Error{Step: "commit", Command: "cat-file", Detail: fmt.Sprintf("unexpected output %q", cut(line))}
		}
		total += n * int64(blobs[f[0]])
	}
	return total, nil
}

// since returns the commit a branch at head is compared with: its merge
// base with the job's base, or the base itself when their histories are
// unrelated.
func (w *Workspace) since(ctx context.Context, head string) (string, error) {
	out, err := w.git(ctx, "compare", nil, "merge-base", w.base, head)
	switch {
	case err == nil:
		return strings.TrimSpace(out), nil
	case ctx.Err() != nil:
		return "", err
	}
	var gerr *Error
	if !errors.As(err, &gerr) || !isExitCode(gerr.Err, 1) {
		return "", err
	}
	// Exit status 1: unrelated histories; compare with the base.
	return w.base, nil
}

// rawTally reads the output of `git diff-index --raw -z --no-renames` as
// git writes it: it counts the records, and keeps the new object ids of
// the first keep records that add a file or change its content. Memory
// stays bounded by keep, however long the output.
type rawTally struct {
	keep    int
	files   int
	blobs   map[string]int // new blob id → files holding it
	kept    int            // records whose ids were looked at
	pending []byte         // a field not yet ended by its NUL
	paths   int            // paths still to read of the current record
	err     error
}

// maxRawField bounds a field of the output: a record's metadata, or a
// path, which git caps at PATH_MAX on Linux.
const maxRawField = 64 << 10

func (t *rawTally) Write(p []byte) (int, error) {
	n := len(p)
	for t.err == nil && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			t.pending = append(t.pending, p...)
			if len(t.pending) > maxRawField {
				t.err = fmt.Errorf("a field longer than %d bytes", maxRawField)
			}
			break
		}
		field := p[:i]
		if len(t.pending) > 0 {
			field = append(t.pending, field...)
			t.pending = t.pending[:0]
		}
		t.field(field)
		p = p[i+1:]
	}
	if t.err != nil {
		return n, &Error{Step: "commit", Command: "diff-index", Detail: "unexpected output: " + t.err.Error()}
	}
	return n, nil
}

// field takes one NUL-ended field: a record's metadata, or one of its
// paths.
func (t *rawTally) field(f []byte) {
	if t.paths > 0 {
		t.paths--
		return
	}
	meta := strings.Fields(strings.TrimPrefix(string(f), ":"))
	if len(f) == 0 || f[0] != ':' || len(meta) != 5 || meta[4] == "" {
		t.err = fmt.Errorf("a record begins %q", cut(string(f)))
		return
	}
	t.files++
	t.paths = 1
	if s := meta[4][0]; s == 'R' || s == 'C' {
		t.paths = 2 // --no-renames asks for none; a copy names two all the same
	}
	if t.kept >= t.keep {
		return
	}
	t.kept++
	newMode, oldID, newID, status := meta[1], meta[2], meta[3], meta[4][0]
	if status == 'D' || newID == oldID || !isBlobMode(newMode) {
		return // nothing new to store: a deletion, a mode change, a gitlink
	}
	if t.blobs == nil {
		t.blobs = map[string]int{}
	}
	t.blobs[newID]++
}

// finish reports output that ended inside a record.
func (t *rawTally) finish() error {
	if t.err == nil && (t.paths > 0 || len(t.pending) > 0) {
		t.err = fmt.Errorf("it ends inside a record")
	}
	if t.err != nil {
		return &Error{Step: "commit", Command: "diff-index", Detail: "unexpected output: " + t.err.Error()}
	}
	return nil
}

// isBlobMode reports whether a tree entry of mode holds a blob: a file,
// an executable, or a symbolic link (whose blob is its target's name).
func isBlobMode(mode string) bool {
	return mode == "100644" || mode == "100755" || mode == "120000"
}

// sizeText writes n bytes for a person, in MiB: "20 MiB", "200.3 MiB".
func sizeText(n int64) string {
	const mib = 1 << 20
	if n%mib == 0 {
		return strconv.FormatInt(n/mib, 10) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/mib, 'f', 1, 64) + " MiB"
}
