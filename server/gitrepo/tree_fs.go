package gitrepo

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// FS is the tree's files as a read-only fs.FS, with the folders that lead
// to them: what package docs reads. It holds the files whose contents were
// read; a file TreeSpec.Known kept out is absent. Only regular files are
// in it (ReadTree skips links), and every file and folder is dated at the
// zero time: the tree has no times.
func (t *Tree) FS() fs.FS {
	m := &treeFS{files: map[string]*TreeFile{}, dirs: map[string][]fs.DirEntry{".": nil}}
	for i := range t.Files {
		f := &t.Files[i]
		if f.Data == nil {
			continue
		}
		m.files[f.Path] = f
		child := fs.DirEntry(treeEntryInfo{name: path.Base(f.Path), size: f.Size, mode: fileMode(f)})
		for dir := path.Dir(f.Path); ; dir = path.Dir(dir) {
			_, seen := m.dirs[dir]
			m.dirs[dir] = append(m.dirs[dir], child)
			if seen || dir == "." {
				break
			}
			child = treeEntryInfo{name: path.Base(dir), mode: fs.ModeDir | 0o555}
		}
	}
	for dir, list := range m.dirs {
		slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		m.dirs[dir] = list
	}
	return m
}

func fileMode(f *TreeFile) fs.FileMode {
	if f.Executable {
		return 0o555
	}
	return 0o444
}

type treeFS struct {
	files map[string]*TreeFile
	dirs  map[string][]fs.DirEntry
}

func (m *treeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if f, ok := m.files[name]; ok {
		return &treeFile{info: treeEntryInfo{name: path.Base(name), size: f.Size, mode: fileMode(f)}, data: f.Data}, nil
	}
	if list, ok := m.dirs[name]; ok {
		return &treeDir{info: treeEntryInfo{name: path.Base(name), mode: fs.ModeDir | 0o555}, entries: list}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (m *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	list, ok := m.dirs[name]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(list), nil
}

// treeEntryInfo is both fs.FileInfo and fs.DirEntry.
type treeEntryInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i treeEntryInfo) Name() string               { return i.name }
func (i treeEntryInfo) Size() int64                { return i.size }
func (i treeEntryInfo) Mode() fs.FileMode          { return i.mode }
func (i treeEntryInfo) ModTime() time.Time         { return time.Time{} }
func (i treeEntryInfo) IsDir() bool                { return i.mode.IsDir() }
func (i treeEntryInfo) Sys() any                   { return nil }
func (i treeEntryInfo) Type() fs.FileMode          { return i.mode.Type() }
func (i treeEntryInfo) Info() (fs.FileInfo, error) { return i, nil }

type treeFile struct {
	info treeEntryInfo
	data []byte
	off  int64
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *treeFile) Close() error               { return nil }
func (f *treeFile) Read(p []byte) (int, error) {
	if f.off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[f.off:])
	f.off += int64(n)
	return n, nil
}

type treeDir struct {
	info    treeEntryInfo
	entries []fs.DirEntry
	off     int
}

func (d *treeDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *treeDir) Close() error               { return nil }
func (d *treeDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}

func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return slices.Clone(rest[:n]), nil
}
