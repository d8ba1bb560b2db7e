// Package rundir makes the private folders of runs (a job's git workspace,
// an agent's home) and removes the ones that dead processes left behind.
//
// A run's folder is removed when the run ends, but a process killed with
// SIGKILL, or a machine that lost power, removes nothing. Sweep finds those
// leftovers at start-up without a record of its own: while a process lives,
// it holds an exclusive lock (flock) on a lock file beside each of its
// folders, and the kernel releases the lock when the process dies, however
// it dies. A folder whose lock can be taken belongs to nobody. Several
// processes (replicas, or a server and its command-line tools) may share one
// parent folder: Sweep never removes a folder whose owner is alive.
//
// The lock file lies beside the folder, not inside it, so that nothing the
// run puts in its folder (or an agent deletes there) can release it.
package rundir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// lockSuffix ends the name of a folder's lock file.
const lockSuffix = ".lock"

// Dir is the private folder of one run, held by this process until Remove.
type Dir struct {
	path string

	mu   sync.Mutex
	lock *os.File // nil once removed
}

// New makes a private (0700) folder in parent, named prefix, a dash and a
// random suffix, and holds its lock until Remove. prefix must not contain a
// path separator.
func New(parent, prefix string) (*Dir, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	for range 10 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		path := filepath.Join(parent, prefix+"-"+hex.EncodeToString(b[:]))
		// The lock first: a folder without a lock file is a leftover to
		// Sweep, so the folder must never exist unlocked.
		lock, err := createLocked(path + lockSuffix)
		if errors.Is(err, fs.ErrExist) || errors.Is(err, errLockGone) {
			continue // a name in use, or a sweep removed it: take another
		}
		if err != nil {
			return nil, fmt.Errorf("rundir: making the lock of a run folder: %w", err)
		}
		if err := os.Mkdir(path, 0o700); err != nil {
			lock.Close()
			_ = os.Remove(path + lockSuffix)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return nil, fmt.Errorf("rundir: making a run folder: %w", err)
		}
		return &Dir{path: path, lock: lock}, nil
	}
	return nil, fmt.Errorf("rundir: no free folder name in %s", parent)
}

// Path is the folder's absolute or parent-relative path, as New made it.
func (d *Dir) Path() string { return d.path }

// Remove deletes the folder and everything in it, then releases its lock.
// It may be called more than once. If the folder cannot be removed whole,
// the lock is kept, so that the folder is not taken for a dead run's while
// this process lives; a later Sweep removes it after the process ends.
func (d *Dir) Remove() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lock == nil {
		return nil
	}
	if err := removeAll(d.path); err != nil {
		return fmt.Errorf("rundir: removing %s: %w", d.path, err)
	}
	// Remove the lock file while holding the lock: a sweeper that locks
	// it afterwards sees that it is gone and leaves it alone.
	_ = os.Remove(d.path + lockSuffix)
	d.lock.Close()
	d.lock = nil
	return nil
}

// Sweep removes every folder in parent that New made with prefix and whose
// owner is gone, with its lock file, and returns the paths it removed. A
// parent that does not exist holds no leftovers. Folders it cannot remove
// are named in the error; the others are removed all the same.
func Sweep(parent, prefix string) ([]string, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rundir: reading %s: %w", parent, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix+"-") || strings.HasSuffix(name, lockSuffix) {
			continue
		}
		path := filepath.Join(parent, name)
		ok, err := sweepOne(path)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, path)
		}
	}
	// Lock files whose folder is gone: a process that died between making
	// the lock and the folder, or during an earlier sweep.
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix+"-") || !strings.HasSuffix(name, lockSuffix) {
			continue
		}
		path := filepath.Join(parent, name)
		if _, err := os.Lstat(strings.TrimSuffix(path, lockSuffix)); errors.Is(err, fs.ErrNotExist) {
			if lock, err := lockExisting(path); err == nil {
				_ = os.Remove(path)
				lock.Close()
			}
		}
	}
	return removed, errors.Join(errs...)
}

// sweepOne removes the folder at path if its owner is gone. It reports
// whether it removed it.
func sweepOne(path string) (bool, error) {
	lock, err := lockExisting(path + lockSuffix)
	switch {
	case errors.Is(err, errLocked):
		return false, nil // a live run
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errLockGone):
		// No lock file: New makes the lock before the folder, so only a
		// folder whose owner finished removing it, or died while doing
		// so, has none. Either way nobody uses it.
	case err != nil:
		return false, fmt.Errorf("rundir: locking %s: %w", path, err)
	}
	if lock != nil {
		defer lock.Close()
	}
	if err := removeAll(path); err != nil {
		return false, fmt.Errorf("rundir: removing the leftover %s: %w", path, err)
	}
	if lock != nil {
		_ = os.Remove(path + lockSuffix)
	}
	return true, nil
}

func checkPrefix(prefix string) error {
	if prefix == "" || strings.ContainsAny(prefix, `/\`) || prefix == "." || prefix == ".." {
		return fmt.Errorf("rundir: invalid folder prefix %q", prefix)
	}
	return nil
}

// removeAll removes a folder in which the run may have left folders
// without write permission (Go's module cache, for one), which RemoveAll
// cannot empty: it gives them back and tries again. It never follows a
// symbolic link out of the folder (WalkDir and RemoveAll do not).
func removeAll(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
