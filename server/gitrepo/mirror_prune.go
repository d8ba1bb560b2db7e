package gitrepo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// A mirror holds its repository's whole history and is kept between jobs.
// One that no job uses any more (its project moved to another repository,
// or is gone) would stay on disk for good, so after a fetch, at most once
// every pruneEvery, the mirrors that no job has fetched into for
// Config.MirrorIdle are removed. The clock is the file system's: the
// manifest a fetch has just written tells the time, and each mirror's
// manifest, rewritten by every fetch, when it was last used.

// DefaultMirrorIdle is Config.MirrorIdle's default.
const DefaultMirrorIdle = 30 * 24 * time.Hour

// pruneEvery is how often at most a process prunes the mirrors.
const pruneEvery = 24 * time.Hour

// pruneMarker is the file of the mirror folder whose time is the last
// prune's, so that processes sharing the folder prune it once between them.
const pruneMarker = "docsapi-pruned"

// pruneIfDue prunes the mirrors if the last prune was pruneEvery or more
// before now. Its failures are logged, not returned: the fetch that called
// it succeeded, and a mirror left in place is only disk space.
func (r *Repositories) pruneIfDue(now time.Time) {
	if r.cfg.MirrorIdle < 0 {
		return
	}
	log := r.cfg.Logger
	marker := filepath.Join(r.cfg.Dir, MirrorFolder, pruneMarker)
	if fi, err := os.Lstat(marker); err == nil && now.Sub(fi.ModTime()) < pruneEvery {
		return
	}
	// The mark comes first: a process that dies pruning does not make
	// every later fetch try again at once.
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		log.Warn("gitrepo: cannot mark the mirrors pruned; not pruning", slog.Any("error", err))
		return
	}
	if _, err := r.pruneMirrors(now, r.cfg.MirrorIdle); err != nil {
		log.Warn("gitrepo: pruning the mirrors", slog.Any("error", err))
	}
}

// pruneMirrors removes the mirrors last fetched into idle or more before
// now, and returns their paths. A mirror is removed under its lock, which
// it does not wait for: one in use now is left, and is not idle anyway. Its
// manifest goes first, so that a mirror half removed (the process died) is
// rebuilt by its next fetch, and its lock file stays (see MirrorFolder).
// Workspaces built from it keep the packs they link. Entries that are not
// mirrors (another name, a link, a file) are left alone.
func (r *Repositories) pruneMirrors(now time.Time, idle time.Duration) ([]string, error) {
	folder := filepath.Join(r.cfg.Dir, MirrorFolder)
	entries, err := os.ReadDir(folder)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: reading the mirror folder: %w", err)
	}
	// A cancelled context: Acquire tries the lock once.
	once, cancel := context.WithCancel(context.Background())
	cancel()
	var removed []string
	var errs []error
	for _, e := range entries {
		sum, ok := strings.CutSuffix(e.Name(), ".git")
		if !ok || !isSHA256Hex(sum) || e.Type() != fs.ModeDir {
			continue
		}
		dir := filepath.Join(folder, e.Name())
		if !mirrorIdle(dir, now, idle) {
			continue
		}
		lock, err := rundir.Acquire(once, filepath.Join(folder, sum+".lock"))
		if err != nil {
			continue // in use: a fetch is under way
		}
		// Again under the lock: a fetch may have ended meanwhile.
		if mirrorIdle(dir, now, idle) {
			if err := removeMirror(dir); err != nil {
				errs = append(errs, err)
			} else {
				removed = append(removed, dir)
				r.cfg.Logger.Info("gitrepo: removed a mirror no job has used", slog.String("path", dir),
					slog.Duration("idle", idle))
			}
		}
		if err := lock.Release(); err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// mirrorIdle reports whether the mirror dir was last fetched into idle or
// more before now: its manifest's time, or the folder's for a mirror that
// has none (one whose making or removal was cut short).
func mirrorIdle(dir string, now time.Time, idle time.Duration) bool {
	fi, err := os.Lstat(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		fi, err = os.Lstat(dir)
	}
	return err == nil && now.Sub(fi.ModTime()) >= idle
}

// removeMirror removes the mirror dir, its manifest first.
func removeMirror(dir string) error {
	if err := os.Remove(filepath.Join(dir, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitrepo: removing the mirror %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("gitrepo: removing the mirror %s: %w", dir, err)
	}
	return nil
}

// isSHA256Hex reports whether s is a SHA-256 in lower-case hex, as
// mirrorOf names mirrors.
func isSHA256Hex(s string) bool {
	if len(s) != 64 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
