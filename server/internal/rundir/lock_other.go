//go:build !unix

package rundir

import (
	"errors"
	"os"
	"sync"
)

var (
	errLocked   = errors.New("rundir: locked by a live process")
	errLockGone = errors.New("rundir: the lock file was removed")
)

// createLocked creates the lock file. Without flock, ownership cannot be
// told apart, so every folder counts as live.
func createLocked(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// lockExisting reports every lock as held: without flock, Sweep cannot
// tell a dead owner from a live one, and must not remove a live run.
func lockExisting(path string) (*os.File, error) {
	if _, err := os.Lstat(path); err != nil {
		return nil, err
	}
	return nil, errLocked
}

// held are the paths whose Lock this process holds. Without flock, a Lock
// excludes the other holders in this process only: processes must not
// share the folder.
var held sync.Map

// tryLock takes the lock of path within this process.
func tryLock(_ *os.File, path string) error {
	if _, taken := held.LoadOrStore(path, true); taken {
		return errLocked
	}
	return nil
}

// unlock gives the lock of path back within this process.
func unlock(path string) { held.Delete(path) }
