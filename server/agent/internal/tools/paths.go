package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/gitname"
)

// errRefused is the reason a path is refused, worded for the model.
type errRefused string

// resolve checks a path from the model and returns it in the form os.Root
// takes. dirOK allows the workspace's root itself (for listing and search).
func (w *Workspace) resolve(p string, dirOK bool) (string, error) {
	if p == "" || p == "." || p == "./" {
		if dirOK {
			return ".", nil
		}
		return "", errRefused("path is required: a file path relative to the repository root")
	}
	if strings.ContainsRune(p, 0) {
		return "", errRefused("path contains a NUL byte")
	}
	if path.IsAbs(p) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" || strings.HasPrefix(p, `\`) {
		return "", errRefused(fmt.Sprintf("%s: absolute paths are refused; use a path relative to the repository root", p))
	}
	clean := path.Clean(filepath.ToSlash(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", errRefused(fmt.Sprintf("%s: the path leaves the workspace", p))
	}
	if clean == "." && !dirOK {
		return "", errRefused(fmt.Sprintf("%s: names the repository root, not a file", p))
	}
	if gitname.InPath(clean) {
		return "", errRefused(fmt.Sprintf("%s: the .git folder is off limits", p))
	}
	if err := w.refuseLinks(p, clean); err != nil {
		return "", err
	}
	return filepath.FromSlash(clean), nil
}

// refuseLinks refuses a path with a symbolic link in any component. Each
// prefix is looked at with Lstat, which never follows a link, so a link is
// refused whatever it points to. Resolving links instead is what failed
// before: a dangling link cannot be resolved, yet writing through it
// creates its target, in .git or anywhere. Components after the first
// missing one are fine: write_file creates them.
func (w *Workspace) refuseLinks(given, clean string) error {
	if clean == "." {
		return nil
	}
	parts := strings.Split(clean, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		info, err := w.root.Lstat(filepath.FromSlash(prefix))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case isLink(info.Mode()):
			return linkRefused(given, prefix)
		case i < len(parts)-1 && !info.IsDir():
			return errRefused(fmt.Sprintf("%s: %s is a file, not a folder", given, prefix))
		}
	}
	return nil
}

func linkRefused(given, component string) error {
	return errRefused(fmt.Sprintf("%s: %s is a symbolic link; the tools do not follow symbolic links",
		given, filepath.ToSlash(component)))
}

// isLink reports whether a mode is a symbolic link, or another reparse
// point such as a Windows junction (reported as irregular), which os.Root
// follows all the same.
func isLink(m fs.FileMode) bool {
	return m&(fs.ModeSymlink|fs.ModeIrregular) != 0
}

func (e errRefused) Error() string { return string(e) }
