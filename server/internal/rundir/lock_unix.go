//go:build unix

package rundir

import (
	"errors"
	"os"
	"syscall"
)

var (
	// errLocked: another live process holds the lock.
	errLocked = errors.New("rundir: locked by a live process")
	// errLockGone: the lock was taken, but its file had been removed (or
	// replaced) meanwhile, so the lock guards nothing.
	errLockGone = errors.New("rundir: the lock file was removed")
)

// createLocked creates a new lock file and locks it.
func createLocked(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockAndVerify(f, path, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockExisting locks an existing lock file without waiting.
func lockExisting(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := lockAndVerify(f, path, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tryLock takes the lock of f, the file at path, without waiting.
func tryLock(f *os.File, path string) error {
	return lockAndVerify(f, path, syscall.LOCK_EX|syscall.LOCK_NB)
}

// unlock has nothing to do: closing the file releases its flock.
func unlock(string) {}

// lockAndVerify takes the lock and then checks that path still names the
// locked file. Between opening and locking, the file's holder may have
// removed it (Remove, or a sweeper), and a lock on an unlinked file would
// guard nothing.
func lockAndVerify(f *os.File, path string, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return errLocked
		}
		if err != nil {
			return err
		}
		break
	}
	held, err := f.Stat()
	if err != nil {
		return err
	}
	named, err := os.Lstat(path)
	if err != nil || !os.SameFile(held, named) {
		return errLockGone
	}
	return nil
}
