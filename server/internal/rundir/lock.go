package rundir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Lock is an exclusive lock on a file that stays in place between its
// holders: the lock of something several processes (replicas sharing a
// folder) take turns to change, such as a cache. Like a run folder's, it
// is an flock, so the kernel releases it however its holder dies.
type Lock struct {
	path string

	mu sync.Mutex
	f  *os.File // nil once released
}

// maxLockPoll bounds the wait between two tries of Acquire: an flock
// cannot be waited for with a deadline, so Acquire polls.
const maxLockPoll = 100 * time.Millisecond

// Acquire waits until this process holds the lock of the file at path,
// which it makes (0600) if missing, or until ctx ends. The file is never
// removed: a holder that removed it could not stop a waiter from locking
// the old file while another locks a new one.
func Acquire(ctx context.Context, path string) (*Lock, error) {
	delay := time.Millisecond
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("rundir: opening the lock %s: %w", path, err)
		}
		err = tryLock(f, path)
		if err == nil {
			return &Lock{path: path, f: f}, nil
		}
		f.Close()
		if !errors.Is(err, errLocked) && !errors.Is(err, errLockGone) {
			return nil, fmt.Errorf("rundir: locking %s: %w", path, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("rundir: waiting for the lock %s: %w", path, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(2*delay, maxLockPoll)
	}
}

// Release gives the lock up. It may be called more than once.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	unlock(l.path)
	err := l.f.Close()
	l.f = nil
	return err
}
