package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The repository's git directory lies beside the working tree, in the
// workspace's private folder, and every git command names it outright: the
// agent, confined to the tree, cannot reach it, and git never reads a .git
// the agent made. A deployment may run a command agent without its
// sandbox, though, and then the agent can reach the git directory through
// Dir()/.. like any file. The checks here are the cheap second line for
// that case, run before Publish runs git: the configuration is rewritten
// as Open left it, and a git directory that now reads another repository
// (its configuration, its objects) is refused.

// redirectFiles are the files through which git reads another folder as
// part of the repository: commondir names where the configuration, refs
// and objects live (so that a config rewritten here is not the one git
// reads), objects/info/alternates where more objects live.
var redirectFiles = []string{"commondir", filepath.Join("objects", "info", "alternates")}

// gitDirState is what Open left in the git directory, to compare with.
type gitDirState struct {
	dir    fs.FileInfo       // the folder itself
	config []byte            // its config file
	files  map[string][]byte // redirectFiles' contents; nil for absent
}

// recordGitDir notes the state of the git directory at dir as Open left it.
func recordGitDir(dir string) (gitDirState, error) {
	var s gitDirState
	var err error
	if s.dir, err = os.Lstat(dir); err != nil {
		return s, err
	}
	if s.config, err = os.ReadFile(filepath.Join(dir, "config")); err != nil {
		return s, err
	}
	s.files = map[string][]byte{}
	for _, name := range redirectFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return s, err
		}
		s.files[name] = b
	}
	return s, nil
}

// check refuses the git directory at dir if it is no longer the folder
// Open made, or holds a redirect file that Open did not leave there.
func (s gitDirState) check(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || !os.SameFile(fi, s.dir) {
		return refuse("the git directory was replaced")
	}
	for _, name := range redirectFiles {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) && s.files[name] == nil {
			continue
		}
		if err == nil && fi.Mode().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && s.files[name] != nil && bytes.Equal(b, s.files[name]) {
				continue
			}
		}
		return refuse("the git directory holds %s, which Open did not create: git would read another repository through it",
			filepath.ToSlash(name))
	}
	return nil
}

// restoreConfig puts back the git directory's config as Open left it.
// Removing first, then creating exclusively, replaces a symbolic link
// rather than writing through it.
func (s gitDirState) restoreConfig(dir string) error {
	path := filepath.Join(dir, "config")
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitrepo: restoring the repository's configuration: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("gitrepo: restoring the repository's configuration: %w", err)
	}
	_, err = f.Write(s.config)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("gitrepo: restoring the repository's configuration: %w", err)
	}
	return nil
}
