package command

import (
	"errors"
	"fmt"
	"syscall"
)

// direntBuffer is the buffer a walk reads folders' entries into.
const direntBuffer = 8 << 10

// atSymlinkNofollow is AT_SYMLINK_NOFOLLOW, which the standard library
// does not export.
const atSymlinkNofollow = 0x100

// sigxfsz is the signal the kernel sends a process that writes past its
// file size limit.
const sigxfsz = int(syscall.SIGXFSZ)

// fileID names a file on the machine.
type fileID struct{ dev, ino uint64 }

// frame is a folder on the walk's path from the root.
type frame struct {
	id      fileID
	pending []string // its sub-folders not walked yet
}

// walker counts the entries of the folders a walk reads.
type walker struct {
	u     usage
	stop  usage
	links map[fileID]bool // files of several names counted so far
	buf   []byte
	names []string
}

// measure walks the tree at root and counts what it holds (see usage),
// following no symbolic link. It stops as soon as a count passes stop's;
// the counts returned are then lower bounds. It holds one folder open at a
// time, reaching a sub-folder from its parent and the parent again through
// "..", whose identity it checks: a folder moved meanwhile ends the walk
// with errMoved. An entry that vanishes as it is read is skipped; one that
// cannot be read ends it with a *measureError.
func measure(root string, stop usage) (usage, error) {
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return usage{}, fmt.Errorf("opening %s: %w", root, err)
	}
	defer func() { syscall.Close(fd) }() // the folder open at the end
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return usage{}, fmt.Errorf("reading %s: %w", root, err)
	}
	w := &walker{u: usage{blocks: int64(st.Blocks) * 512}, stop: stop, links: map[fileID]bool{}, buf: make([]byte, direntBuffer)}
	path := []frame{{id: idOf(&st)}}
	if err := w.read(fd, &path[0]); err != nil || w.u.past(stop) {
		return w.u, err
	}
	for {
		top := &path[len(path)-1]
		if len(top.pending) == 0 {
			if len(path) == 1 {
				return w.u, nil
			}
			path = path[:len(path)-1]
			parent, err := syscall.Openat(fd, "..", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return w.u, &measureError{"..", err}
			}
			syscall.Close(fd)
			fd = parent
			if err := syscall.Fstat(fd, &st); err != nil {
				return w.u, &measureError{"..", err}
			}
			if idOf(&st) != path[len(path)-1].id {
				return w.u, errMoved
			}
			continue
		}
		name := top.pending[len(top.pending)-1]
		top.pending = top.pending[:len(top.pending)-1]
		child, err := syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
			continue // removed, or replaced by a file or a link, since it was listed
		}
		if err != nil {
			return w.u, &measureError{name, err}
		}
		syscall.Close(fd)
		fd = child
		if err := syscall.Fstat(fd, &st); err != nil {
			return w.u, &measureError{name, err}
		}
		path = append(path, frame{id: idOf(&st)})
		if err := w.read(fd, &path[len(path)-1]); err != nil || w.u.past(stop) {
			return w.u, err
		}
	}
}

// read counts the entries of the folder fd and lists its sub-folders in
// f.pending. It returns early once a count passes the walk's stop.
func (w *walker) read(fd int, f *frame) error {
	for {
		n, err := syscall.ReadDirent(fd, w.buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return &measureError{".", err}
		}
		if n <= 0 {
			return nil
		}
		_, _, w.names = syscall.ParseDirent(w.buf[:n], -1, w.names[:0])
		for _, name := range w.names {
			var st syscall.Stat_t
			err := fstatat(fd, name, &st)
			if errors.Is(err, syscall.ENOENT) {
				continue
			}
			if err != nil {
				return &measureError{name, err}
			}
			w.count(name, &st, f)
			if w.u.past(w.stop) {
				return nil
			}
		}
	}
}

// count adds the entry name, whose status is st, of the folder f.
func (w *walker) count(name string, st *syscall.Stat_t, f *frame) {
	w.u.files++
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		// A folder has one name (but its own "." and its children's
		// ".."), so its blocks are counted here, where it is listed.
		f.pending = append(f.pending, name)
		w.u.blocks += int64(st.Blocks) * 512
		return
	case syscall.S_IFREG, syscall.S_IFLNK:
		w.u.size += int64(st.Size)
	}
	if uint64(st.Nlink) > 1 {
		id := idOf(st)
		if w.links[id] {
			return
		}
		w.links[id] = true
	}
	w.u.blocks += int64(st.Blocks) * 512
}

func idOf(st *syscall.Stat_t) fileID {
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
}

// fsUsed returns the bytes in use on the file system that holds path, as
// the kernel counts them at once (ext4 and XFS count the blocks reserved
// for data still in the page cache; btrfs may lag).
func fsUsed(path string) (uint64, bool) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(path, &s); err != nil {
		return 0, false
	}
	return (uint64(s.Blocks) - uint64(s.Bfree)) * uint64(s.Bsize), true
}
