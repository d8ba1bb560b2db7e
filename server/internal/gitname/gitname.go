// Package gitname tells whether a file name would be taken for a git
// directory (".git") on some file system. Both the LLM agent's file tools
// and the tree check before a commit refuse such names, by this one rule.
package gitname

import "strings"

// IsDotGit reports whether one path component may name a .git folder on
// some file system: in any letter case; with the dots and spaces Windows
// drops from the end of a name (".git. "); with an NTFS stream after a
// colon (".git::$INDEX_ALLOCATION" is the folder itself); as its NTFS short
// name (GIT~1, or another number when that one was taken); or with the
// zero-width code points HFS+ ignores. git refuses these names as well
// (is_ntfs_dotgit and is_hfs_dotgit in its verify_path); this check is
// broader where that keeps it simple, since no page needs such a name.
// Backslashes separate components, as they do on Windows.
func IsDotGit(name string) bool {
	for _, part := range strings.Split(name, `\`) {
		if isDotGitPart(part) {
			return true
		}
	}
	return false
}

func isDotGitPart(name string) bool {
	name = strings.Map(dropHFSIgnorable, name)
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimRight(name, ". ")
	if strings.EqualFold(name, ".git") {
		return true
	}
	const short = "git~"
	if len(name) <= len(short) || !strings.EqualFold(name[:len(short)], short) {
		return false
	}
	return strings.Trim(name[len(short):], "0123456789") == ""
}

// InPath reports whether any component of a slash (or backslash) separated
// path is named like .git.
func InPath(p string) bool {
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if IsDotGit(part) {
			return true
		}
	}
	return false
}

// dropHFSIgnorable drops, for strings.Map, the code points that HFS+
// leaves out when it compares names (the list of git's next_hfs_char).
func dropHFSIgnorable(r rune) rune {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return -1
	}
	return r
}
