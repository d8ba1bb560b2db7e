package command

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
)

// The workspace's bound. The workspace is a folder of the server's disk
// (under git.workDir), writable by the agent, sandboxed or not: without a
// bound, an agent could fill the disk, and with it the database's, while
// it runs, and `git add` would then hash all it wrote. So each run measures
// the workspace before the program starts, watches it while the program
// runs, and measures it again when the program has ended:
//
//   - A walk counts three things: the disk the tree's entries take (their
//     blocks, st_blocks: a sparse file counts what it takes, a file of
//     several names once), the sizes of its files and links (every name,
//     holes included: what `git add` would read and hash), and its names
//     (files, folders, links: the disk's inodes, and the walk's own cost).
//     Links are never followed. The first two are held to
//     WorkspaceLimits.MaxGrowth, the third to MaxFiles, each as growth
//     since the run started.
//   - A walk holds one folder open at a time and reads each folder whole
//     before it goes down into its sub-folders, keeping their names: its
//     memory grows with the names it counts, and it stops as soon as a
//     count passes its limit, so neither deep nesting nor millions of
//     entries make it unbounded.
//   - While the program runs, the tree is walked every workspaceWalkEvery,
//     and sooner when the file system that holds it has grown by a
//     sixteenth of MaxGrowth (checked every workspacePoll), but never
//     again before as long as the last walk took has passed (the check
//     takes at most half a processor).
//   - Past a limit, the run's context is cancelled with the reason, which
//     kills the program and all its processes, as a timeout does; the job
//     fails for good. A tree still past a limit when the program has ended
//     fails the job the same way, before anything is published.
//
// Between two walks an agent writes at the disk's speed (into the page
// cache, faster, until the kernel throttles it): that is the overshoot.
// In the sandbox, no single file may outgrow MaxGrowth (RLIMIT_FSIZE). A
// walk sees the tree as it is while it walks: an agent that moves a folder
// across the walk (watching its progress through inotify, say) can keep it
// unseen while it runs, never past the end of the run. A file system of
// the workspaces' own, or a quota, is the bound no agent can race.

// Defaults of WorkspaceLimits. A documentation job with a toolchain
// installed into its workspace (a site generator's node_modules, a Python
// environment) takes some hundreds of MiB in some tens of thousands of
// files.
const (
	DefaultMaxWorkspaceGrowth = 1 << 30
	DefaultMaxWorkspaceFiles  = 200_000
)

// The smallest limits New accepts: below them, an agent hardly works, and
// a limit so small is more likely a unit mistaken.
const (
	MinMaxWorkspaceGrowth = 1 << 20
	MinMaxWorkspaceFiles  = 100
)

// The schedule of the checks while the program runs.
const (
	// workspaceWalkEvery is the longest time between two walks.
	workspaceWalkEvery = time.Second
	// workspacePoll is how often the file system's free space is read: a
	// growth of MaxGrowth/workspaceTrigger since the last walk starts the
	// next one then.
	workspacePoll    = 50 * time.Millisecond
	workspaceTrigger = 16
	// maxMovedWalks is how many walks in a row may find a folder moved
	// under them before the tree counts as unmeasurable: an agent rarely
	// moves the very folder being walked, and never on purpose but to
	// hide from the walk.
	maxMovedWalks = 10
	// finalAttempts is how many times the final measure is tried when a
	// folder moved under it (only a process that outlived an unsandboxed
	// run can move one then).
	finalAttempts = 3
)

// WorkspaceLimits bound what one run may add to its workspace, whether the
// sandbox is on or off. A zero field takes its default.
//
// While the program runs, the workspace is walked every second, and within
// 50 ms of its file system's use growing by a sixteenth of MaxGrowth
// (where the file system counts writes at once: ext4, XFS, tmpfs). Between
// two checks the program writes at the disk's speed, so a workspace may
// pass MaxGrowth by what the disk takes in 50 ms plus three walks' time (a
// walk waits for as long as the last one took, and the breach shows once
// the next has passed it; or in a second plus a walk where the file system
// counts late) before the program is killed. A walk sees the tree as it is while it walks: a program that
// moves a folder across a walk can hide it from the walks while it runs,
// never from the measure at the end. A file system of the workspaces' own
// (or a quota) is the bound nothing can race.
type WorkspaceLimits struct {
	// MaxGrowth bounds, in bytes, how much the workspace may grow during
	// a run, in the disk its files take (their blocks) and, apart, in the
	// sizes of its files (holes of sparse files included: what git would
	// read); default DefaultMaxWorkspaceGrowth. In the sandbox it is also
	// the largest file a process may write (RLIMIT_FSIZE): a write past it
	// fails (EFBIG), and the kernel's SIGXFSZ ends a program that does not
	// catch it.
	MaxGrowth int64
	// MaxFiles bounds how many names (files, folders, links) the workspace
	// may gain during a run; default DefaultMaxWorkspaceFiles.
	MaxFiles int
}

// WithDefaults returns l with its zero fields set to their defaults.
func (l WorkspaceLimits) WithDefaults() WorkspaceLimits {
	if l.MaxGrowth == 0 {
		l.MaxGrowth = DefaultMaxWorkspaceGrowth
	}
	if l.MaxFiles == 0 {
		l.MaxFiles = DefaultMaxWorkspaceFiles
	}
	return l
}

// Check reports the first of l's limits that is out of range. Its error
// names each field by name(field), field being the Go name ("MaxGrowth",
// "MaxFiles"), so that a configuration can report its own keys; a nil
// name keeps the Go names.
func (l WorkspaceLimits) Check(name func(field string) string) error {
	if name == nil {
		name = func(field string) string { return field }
	}
	switch {
	case l.MaxGrowth < 0:
		return fmt.Errorf("%s is %d; it must not be negative (0 takes the default, %s)", name("MaxGrowth"), l.MaxGrowth, sandbox.FormatBytes(DefaultMaxWorkspaceGrowth))
	case l.MaxFiles < 0:
		return fmt.Errorf("%s is %d; it must not be negative (0 takes the default, %d)", name("MaxFiles"), l.MaxFiles, DefaultMaxWorkspaceFiles)
	}
	l = l.WithDefaults()
	switch {
	case l.MaxGrowth < MinMaxWorkspaceGrowth:
		return fmt.Errorf("%s is %s; the smallest is %s", name("MaxGrowth"), sandbox.FormatBytes(l.MaxGrowth), sandbox.FormatBytes(MinMaxWorkspaceGrowth))
	case l.MaxFiles < MinMaxWorkspaceFiles:
		return fmt.Errorf("%s is %d; the smallest is %d", name("MaxFiles"), l.MaxFiles, MinMaxWorkspaceFiles)
	}
	return nil
}

// usage is what a tree holds, as the bound counts it.
type usage struct {
	blocks int64 // bytes of disk its entries take (st_blocks × 512), a file of several names once
	size   int64 // bytes of its files and links (st_size), every name
	files  int64 // its names: files, folders, links and the rest
}

// unbounded is the stop of a walk that counts a whole tree.
var unbounded = usage{blocks: math.MaxInt64, size: math.MaxInt64, files: math.MaxInt64}

// past reports whether one of u's counts passes the same count of limit.
func (u usage) past(limit usage) bool {
	return u.blocks > limit.blocks || u.size > limit.size || u.files > limit.files
}

// errMoved is a walk's error when a folder was moved while it was in it:
// what it counted is a lower bound, and the rest of the tree unseen.
var errMoved = errors.New("a folder was moved while the workspace was measured")

// measureError is a walk's error when an entry cannot be read: the tree
// cannot be measured, which the bound takes as a breach.
type measureError struct {
	name string // the entry's name in its folder
	err  error
}

func (e *measureError) Error() string { return fmt.Sprintf("%q: %v", e.name, e.err) }
func (e *measureError) Unwrap() error { return e.err }

// workspaceError is the cause with which a run is stopped, or the error of
// a run whose workspace is past its limits when the program ends.
type workspaceError struct{ msg string }

func (e *workspaceError) Error() string { return e.msg }

// workspaceWatch holds one run's workspace to its limits.
type workspaceWatch struct {
	root   string
	limits WorkspaceLimits // with the defaults
	base   usage           // the tree before the program started
	stop   usage           // base plus the limits: a walk ends past any
	log    *slog.Logger
	jobID  string
}

// newWorkspaceWatch measures the workspace at root before the program
// starts.
func newWorkspaceWatch(root string, l WorkspaceLimits, log *slog.Logger, jobID string) (*workspaceWatch, error) {
	base, err := measure(root, unbounded)
	if err != nil {
		return nil, fmt.Errorf("command agent: measuring the workspace before the run: %w", err)
	}
	stop := usage{blocks: base.blocks + l.MaxGrowth, size: base.size + l.MaxGrowth, files: base.files + int64(l.MaxFiles)}
	return &workspaceWatch{root: root, limits: l, base: base, stop: stop, log: log, jobID: jobID}, nil
}

// watch checks the workspace while the program runs, until ctx ends. At
// the first breach it stops the run with the reason (kill) and returns.
func (w *workspaceWatch) watch(ctx context.Context, kill context.CancelCauseFunc) {
	tick := time.NewTicker(workspacePoll)
	defer tick.Stop()
	trigger := uint64(w.limits.MaxGrowth / workspaceTrigger)
	low, statOK := fsUsed(w.root) // the least the file system used since the last walk
	lastEnd, lastTook := time.Now(), time.Duration(0)
	moved := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		since := time.Since(lastEnd)
		if since < lastTook {
			continue
		}
		due := since >= workspaceWalkEvery
		if used, ok := fsUsed(w.root); ok && statOK {
			low = min(low, used)
			due = due || used-low >= trigger
		}
		if !due {
			continue
		}
		low, statOK = fsUsed(w.root)
		start := time.Now()
		u, err := measure(w.root, w.stop)
		lastEnd = time.Now()
		lastTook = lastEnd.Sub(start)
		if errors.Is(err, errMoved) && !u.past(w.stop) {
			if moved++; moved < maxMovedWalks {
				continue
			}
			err = fmt.Errorf("its folders moved under %d walks in a row", moved)
		} else {
			moved = 0
		}
		if reason := w.breach(u, err, "the agent was stopped"); reason != nil {
			w.log.Warn("command agent: the workspace passed its limits; stopping the agent", slog.String("job_id", w.jobID),
				slog.Int64("disk_growth", u.blocks-w.base.blocks), slog.Int64("size_growth", u.size-w.base.size),
				slog.Int64("files_growth", u.files-w.base.files), slog.Any("reason", reason))
			kill(reason)
			return
		}
	}
}

// final measures the workspace once the program has ended, and returns
// the breach of a limit, if any.
func (w *workspaceWatch) final() error {
	var u usage
	var err error
	for range finalAttempts {
		if u, err = measure(w.root, w.stop); !errors.Is(err, errMoved) || u.past(w.stop) {
			break
		}
	}
	if errors.Is(err, errMoved) && !u.past(w.stop) {
		err = errors.New("its folders kept moving after the agent ended")
	}
	reason := w.breach(u, err, "found when the agent ended")
	if reason != nil {
		w.log.Warn("command agent: the workspace is past its limits after the run", slog.String("job_id", w.jobID), slog.Any("reason", reason))
	}
	return reason
}

// breach turns a walk's counts and error into the reason the run fails,
// or nil; when says at which point of the run.
func (w *workspaceWatch) breach(u usage, err error, when string) error {
	const unpublished = "; nothing of the run is published"
	raise := func(key string) string {
		return fmt.Sprintf(" (raise agent.%s in serve's configuration if a job needs more)", key)
	}
	limit := sandbox.FormatBytes(w.limits.MaxGrowth)
	var msg string
	switch {
	case u.blocks > w.stop.blocks:
		msg = fmt.Sprintf("the workspace grew past its limit: its files take at least %s more of the disk than when the run started, and a run may add at most %s%s",
			sizeText(u.blocks-w.base.blocks), limit, raise("maxWorkspaceGrowth"))
	case u.size > w.stop.size:
		msg = fmt.Sprintf("the workspace grew past its limit: the sizes of its files add up to at least %s more than when the run started (a sparse file counts whole, as git would read it), and a run may add at most %s%s",
			sizeText(u.size-w.base.size), limit, raise("maxWorkspaceGrowth"))
	case u.files > w.stop.files:
		msg = fmt.Sprintf("the workspace grew past its limit: it holds at least %d more files, folders and links than when the run started, and a run may add at most %d%s",
			u.files-w.base.files, w.limits.MaxFiles, raise("maxWorkspaceFiles"))
	case err != nil:
		msg = fmt.Sprintf("the workspace cannot be measured against its limits: %v", err)
	default:
		return nil
	}
	return &workspaceError{msg: "command agent: " + msg + "; " + when + unpublished}
}

// sizeText writes n bytes in the largest binary unit below it, to one
// decimal.
func sizeText(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}
