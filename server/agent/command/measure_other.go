//go:build !linux

package command

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// sigxfsz stands for SIGXFSZ where no sandbox runs: no run is ever held
// to a file size limit there.
const sigxfsz = -1

// measure walks the tree at root by its paths and counts what it holds
// (see usage), following no symbolic link, and stops as soon as a count
// passes stop's. The server and its sandbox run on Linux; on other
// systems (a developer's machine) a file's size stands for its blocks, and
// a file of several names counts for each.
func measure(root string, stop usage) (usage, error) {
	var u usage
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			var info fs.FileInfo
			if info, err = d.Info(); err == nil {
				if p != root {
					u.files++
				}
				if !info.IsDir() {
					u.size += info.Size()
					u.blocks += (info.Size() + 511) / 512 * 512
				}
			}
		}
		if errors.Is(err, fs.ErrNotExist) && p != root {
			return nil // removed while the walk ran
		}
		if err != nil {
			return &measureError{p, err}
		}
		if u.past(stop) {
			return filepath.SkipAll
		}
		return nil
	})
	return u, err
}

// fsUsed reports nothing where the file system's use is not read: the
// periodic walks alone bound the workspace.
func fsUsed(string) (uint64, bool) { return 0, false }
