//go:build unix

package gitrepo

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUs reports whether the file fi describes belongs to the user the
// server runs as.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
