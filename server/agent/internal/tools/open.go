package tools

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// errLink is what openChild and verifyOpened return when a name turns out
// to be a link, or to have been one when it was opened.
var errLink = errors.New("a symbolic link")

// openFolder opens the folder dir ("." is the workspace) one component at
// a time, making the missing ones when create is set. os.Root would follow
// links inside the workspace; opening step by step, and verifying each
// step, keeps a link out even if one appears after resolve looked.
func (w *Workspace) openFolder(given, dir string, create bool) (*os.Root, error) {
	folder, err := w.root.OpenRoot(".")
	if err != nil || dir == "." {
		return folder, err
	}
	parts := strings.Split(dir, string(filepath.Separator))
	for i, name := range parts {
		child, err := openChild(folder, name, create)
		folder.Close()
		if errors.Is(err, errLink) {
			return nil, linkRefused(given, filepath.Join(parts[:i+1]...))
		}
		if err != nil {
			return nil, err
		}
		folder = child
	}
	return folder, nil
}

// openChild opens the folder name inside parent, refusing a link.
func openChild(parent *os.Root, name string, create bool) (*os.Root, error) {
	if create {
		// Mkdir never follows a link: a link under the name fails with
		// ErrExist and is refused below.
		if err := parent.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	child, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	opened, err := child.Stat(".")
	if err == nil {
		err = verifyOpened(parent, name, opened)
	}
	if err != nil {
		child.Close()
		return nil, err
	}
	return child, nil
}

// verifyOpened checks that opened, what parent opened as name, is the entry
// name is now, and that the entry is no link. Looking after opening is what
// makes it sound: a link that was there at the open is either still there
// or was replaced by a different file, which SameFile tells apart.
func verifyOpened(parent *os.Root, name string, opened fs.FileInfo) error {
	named, err := parent.Lstat(name)
	if err != nil {
		return err
	}
	if isLink(named.Mode()) || !os.SameFile(opened, named) {
		return errLink
	}
	return nil
}

// openFile opens the regular file p for reading, with openFolder's
// guarantee for the file too.
func (w *Workspace) openFile(given, p string) (*os.File, fs.FileInfo, error) {
	folder, err := w.openFolder(given, filepath.Dir(p), false)
	if err != nil {
		return nil, nil, err
	}
	defer folder.Close()
	name := filepath.Base(p)
	// Looking first keeps a folder, a link or a named pipe (whose opening
	// would block) from being opened at all.
	info, err := folder.Lstat(name)
	switch {
	case err != nil:
		return nil, nil, err
	case isLink(info.Mode()):
		return nil, nil, linkRefused(given, p)
	case info.IsDir():
		return nil, nil, errRefused(given + ": is a folder; use " + nameListFiles)
	case !info.Mode().IsRegular():
		return nil, nil, errRefused(given + ": not a regular file")
	}
	f, err := folder.Open(name)
	if err != nil {
		return nil, nil, err
	}
	opened, err := f.Stat()
	if err == nil {
		err = verifyOpened(folder, name, opened)
	}
	if errors.Is(err, errLink) {
		err = linkRefused(given, p)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, opened, nil
}

// replace puts content in the file p, creating it and its folders if
// needed (create) or only replacing it.
//
// No write goes through a link, even one made after resolve looked: the
// folders come from openFolder; the content goes to a new file created
// with O_EXCL, which os.Root never resolves through a link (os.Root offers
// no O_NOFOLLOW: it adds the flag itself and then follows the link within
// the root); and that file is renamed over p, which replaces the name
// itself, a link included, never what a link points to. A link found at p
// is still refused, for a clear answer. Not covered: the file's owner is
// the server's user afterwards, and hard links to the old file keep the
// old content (which also keeps a hard link into .git from being written
// through). An existing file keeps its permissions.
func (w *Workspace) replace(given, p, content string, create bool) error {
	folder, err := w.openFolder(given, filepath.Dir(p), create)
	if err != nil {
		return err
	}
	defer folder.Close()
	name := filepath.Base(p)
	info, err := folder.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		info = nil
	case err != nil:
		return err
	case isLink(info.Mode()):
		return linkRefused(given, p)
	case !info.Mode().IsRegular():
		return errRefused(given + ": not a regular file")
	}
	tmp, err := writeNew(folder, content, info)
	if err != nil {
		return err
	}
	if err := folder.Rename(tmp, name); err != nil {
		folder.Remove(tmp)
		return err
	}
	return nil
}

// writeNew writes content to a new file of folder, with the permissions of
// old when it is not nil, and returns its name.
func writeNew(folder *os.Root, content string, old fs.FileInfo) (string, error) {
	name := ".tools-" + rand.Text() + ".tmp"
	f, err := folder.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(content)
	if err == nil && old != nil {
		// On the open file: no name is looked up, and the umask does not
		// apply, so the permissions are exactly the old ones.
		err = f.Chmod(old.Mode().Perm())
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		folder.Remove(name)
		return "", err
	}
	return name, nil
}

// readFile reads the regular file p, of at most MaxFileBytes, through
// openFile.
func (w *Workspace) readFile(given, p string) ([]byte, error) {
	f, info, err := w.openFile(given, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := w.limits.MaxFileBytes
	if info.Size() > limit {
		return nil, errRefused(fmt.Sprintf("%s: the file is %d bytes, over the limit of %d bytes", given, info.Size(), limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit { // it grew after Stat
		return nil, errRefused(fmt.Sprintf("%s: the file is over the limit of %d bytes", given, limit))
	}
	return data, nil
}
