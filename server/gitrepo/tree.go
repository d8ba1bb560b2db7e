package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// Defaults of TreeSpec's limits.
const (
	// DefaultTreeMaxFiles is the most files ReadTree takes: far more
	// pages than a documentation site has.
	DefaultTreeMaxFiles = 20000
	// DefaultTreeMaxFileBytes is the largest file ReadTree reads; a
	// larger one is skipped with the reason.
	DefaultTreeMaxFileBytes = 4 << 20
	// DefaultTreeMaxBytes is the most bytes of files one ReadTree reads.
	DefaultTreeMaxBytes = 256 << 20
)

// maxTreeListing bounds git ls-tree's output: a tree listing past it is
// not a documentation repository's (a million files or more).
const maxTreeListing = 128 << 20

// TreeSpec says what ReadTree reads.
type TreeSpec struct {
	// Ref is the branch or tag; "" for the remote's default branch.
	Ref string
	// Match says which files to take, by path (slash-separated, from the
	// repository's root); nil takes every file.
	Match func(path string) bool
	// Known, if set, reports whether the caller already has the blob of
	// path: such a file is listed with its blob ID but its contents are
	// not read, so an update reads only what changed.
	Known func(path, blob string) bool
	// MaxFiles is the most matched files (more is an error), MaxFileBytes
	// the largest file read (a larger one is skipped), MaxBytes the most
	// bytes read in all (more is an error). Defaults DefaultTreeMaxFiles,
	// DefaultTreeMaxFileBytes and DefaultTreeMaxBytes.
	MaxFiles     int
	MaxFileBytes int64
	MaxBytes     int64
}

// Tree is a repository's files at one commit, as ReadTree read them.
type Tree struct {
	// Commit is the commit read, the ref's tip when ReadTree ran.
	Commit string
	// Ref is the branch or tag read, by its short name: TreeSpec.Ref, or
	// the default branch's name when that was "".
	Ref string
	// Message is the commit's message, cut to maxCommitMessage bytes.
	Message string
	// Files are the matched regular files, sorted by path.
	Files []TreeFile
	// Skipped are the entries not taken, with the reason: matched
	// symbolic links (never followed) and submodules, files past
	// MaxFileBytes, and names no file system path could have.
	Skipped []TreeSkip
}

// TreeFile is one file of a Tree.
type TreeFile struct {
	Path string
	// Blob is the file's git object ID: equal IDs, equal contents.
	Blob string
	Size int64
	// Data is the file's contents; nil when TreeSpec.Known said the
	// caller has them.
	Data []byte
	// Executable is the file's executable bit.
	Executable bool
}

// TreeSkip is an entry ReadTree did not take, and why.
type TreeSkip struct {
	Path, Reason string
}

// ReadTree reads the files of repository at spec.Ref that spec.Match
// takes, through the repository's mirror (fetched first, as for a job), in
// a private folder that it removes before it returns. Git runs as it does
// for jobs: in an empty environment, with hooks and every program a
// configuration could name pinned off (see the package documentation).
// Nothing is checked out: the files come from git's objects, so the
// repository's symbolic links are entries to skip, never paths to follow.
//
// Missing repositories and refs, and refused credentials, are
// engine.Permanent errors, as in Open; so are the limits.
func (r *Repositories) ReadTree(ctx context.Context, repository string, spec TreeSpec) (*Tree, error) {
	if err := validateRepository(repository); err != nil {
		return nil, engine.Permanent(err)
	}
	if spec.MaxFiles < 0 || spec.MaxFileBytes < 0 || spec.MaxBytes < 0 {
		return nil, errors.New("gitrepo: TreeSpec limits must not be negative")
	}
	if spec.MaxFiles == 0 {
		spec.MaxFiles = DefaultTreeMaxFiles
	}
	if spec.MaxFileBytes == 0 {
		spec.MaxFileBytes = DefaultTreeMaxFileBytes
	}
	if spec.MaxBytes == 0 {
		spec.MaxBytes = DefaultTreeMaxBytes
	}
	ref := shortRef(spec.Ref)
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n\r") {
		return nil, engine.Permanent(fmt.Errorf("gitrepo: the ref %q is not a valid branch or tag name", ref))
	}
	folder, err := rundir.New(r.cfg.Dir, workspacePrefix)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: making a folder to read the tree: %w", err)
	}
	defer func() {
		if err := folder.Remove(); err != nil {
			r.cfg.Logger.Warn("gitrepo: removing the folder of a tree read", slog.Any("error", err))
		}
	}()
	home := filepath.Join(folder.Path(), "home")
	gitDir := filepath.Join(folder.Path(), "git")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, fmt.Errorf("gitrepo: making a folder to read the tree: %w", err)
	}
	shown := redactURL(repository)
	cred, err := r.credentialFor(ctx, repository)
	if err != nil {
		return nil, err
	}
	bare := cmdSpec{step: "read", dir: home, home: home, url: repository, cred: cred}
	patterns := []string{"HEAD"}
	if ref != "" {
		patterns = append(patterns, "refs/heads/"+ref, "refs/tags/"+ref)
	}
	out, err := r.run(ctx, bare, append([]string{"ls-remote", "--symref", "--", repository}, patterns...)...)
	if err != nil {
		return nil, err
	}
	baseRef, problem := parseLsRemote(out).base(ref)
	switch problem {
	case NoRef:
		return nil, engine.Permanent(fmt.Errorf("gitrepo: read: the ref %q does not exist in %s", ref, shown))
	case NoCommits:
		return nil, engine.Permanent(fmt.Errorf("gitrepo: read: %s has no commits", shown))
	case NoDefaultBranch:
		return nil, engine.Permanent(fmt.Errorf("gitrepo: read: cannot tell the default branch of %s; give a ref", shown))
	}
	// A bare repository of our own, given the mirror's packs as links (as
	// a workspace is): a repack of the mirror meanwhile takes nothing
	// from it.
	if _, err := r.run(ctx, cmdSpec{step: "read", dir: home, home: home},
		"init", "--quiet", "--bare", "--template=", "--object-format=sha1", "--", gitDir); err != nil {
		return nil, err
	}
	ids, err := r.mirrorOf(repository).sync(ctx, home, cred, []string{baseRef}, filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		return nil, err
	}
	tree := &Tree{Commit: ids[baseRef].commit, Ref: strings.TrimPrefix(strings.TrimPrefix(baseRef, "refs/heads/"), "refs/tags/")}
	local := cmdSpec{step: "read", dir: home, home: home, gitDir: gitDir}
	commit := &cappedBuffer{max: maxCommitObject}
	if err := r.runTo(ctx, local, commit, "cat-file", "commit", tree.Commit); err != nil && !commit.over {
		return nil, err
	}
	tree.Message = commitMessage(commit.String())

	listing := &cappedBuffer{max: maxTreeListing}
	if err := r.runTo(ctx, local, listing, "ls-tree", "-r", "-z", "-l", "--full-tree", tree.Commit); err != nil {
		if listing.over {
			return nil, engine.Permanent(fmt.Errorf("gitrepo: read: the tree of %s at %s lists more than %d bytes of entries", shown, ref, maxTreeListing))
		}
		return nil, err
	}
	var (
		want  []int // indexes in tree.Files of the files to read
		total int64
	)
	for rec := range strings.SplitSeq(strings.TrimSuffix(listing.String(), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		e, ok := parseTreeEntry(rec)
		if !ok {
			return nil, &Error{Step: "read", Command: "ls-tree", Detail: fmt.Sprintf("unexpected entry %q", rec)}
		}
		if !fs.ValidPath(e.path) || strings.ContainsRune(e.path, '\\') {
			tree.Skipped = append(tree.Skipped, TreeSkip{Path: e.path, Reason: "not a valid path (a crafted tree)"})
			continue
		}
		if spec.Match != nil && !spec.Match(e.path) {
			continue
		}
		switch {
		case e.kind == "commit":
			tree.Skipped = append(tree.Skipped, TreeSkip{Path: e.path, Reason: "a submodule, not read"})
			continue
		case e.mode == "120000":
			tree.Skipped = append(tree.Skipped, TreeSkip{Path: e.path, Reason: "a symbolic link, not followed"})
			continue
		case e.kind != "blob" || (e.mode != "100644" && e.mode != "100755"):
			tree.Skipped = append(tree.Skipped, TreeSkip{Path: e.path, Reason: "not a regular file (mode " + e.mode + ")"})
			continue
		}
		if len(tree.Files) >= spec.MaxFiles {
			return nil, engine.Permanent(fmt.Errorf("gitrepo: read: %s at %s has more than %d matching files (TreeSpec.MaxFiles)", shown, ref, spec.MaxFiles))
		}
		if e.size > spec.MaxFileBytes {
			tree.Skipped = append(tree.Skipped, TreeSkip{Path: e.path,
				Reason: fmt.Sprintf("%d bytes, larger than %d (TreeSpec.MaxFileBytes)", e.size, spec.MaxFileBytes)})
			continue
		}
		f := TreeFile{Path: e.path, Blob: e.object, Size: e.size, Executable: e.mode == "100755"}
		if spec.Known == nil || !spec.Known(e.path, e.object) {
			total += e.size
			if total > spec.MaxBytes {
				return nil, engine.Permanent(fmt.Errorf("gitrepo: read: the matching files of %s at %s hold more than %d bytes (TreeSpec.MaxBytes)", shown, ref, spec.MaxBytes))
			}
			want = append(want, len(tree.Files))
		}
		tree.Files = append(tree.Files, f)
	}
	if err := r.readBlobs(ctx, local, tree.Files, want); err != nil {
		return nil, err
	}
	slices.SortFunc(tree.Files, func(a, b TreeFile) int { return strings.Compare(a.Path, b.Path) })
	r.cfg.Logger.Info("gitrepo: tree read", slog.String("repository", shown), slog.String("ref", ref),
		slog.String("commit", tree.Commit), slog.Int("files", len(tree.Files)), slog.Int("read", len(want)),
		slog.Int("skipped", len(tree.Skipped)))
	return tree, nil
}

// maxCommitObject bounds the commit object read for its message; a longer
// message is cut.
const maxCommitObject = 64 << 10

// commitMessage is the message of a commit object (the text after its
// headers' blank line), as far as it was read.
func commitMessage(object string) string {
	_, msg, _ := strings.Cut(object, "\n\n")
	return msg
}

// treeEntry is one record of git ls-tree -l -z.
type treeEntry struct {
	mode, kind, object, path string
	size                     int64
}

// parseTreeEntry reads "<mode> <type> <object> <size>\t<path>".
func parseTreeEntry(rec string) (treeEntry, bool) {
	meta, p, ok := strings.Cut(rec, "\t")
	if !ok {
		return treeEntry{}, false
	}
	f := strings.Fields(meta)
	if len(f) != 4 {
		return treeEntry{}, false
	}
	e := treeEntry{mode: f[0], kind: f[1], object: f[2], path: p}
	if f[3] != "-" {
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || n < 0 {
			return treeEntry{}, false
		}
		e.size = n
	}
	return e, true
}

// readBlobs reads the contents of files[want...] with one git cat-file.
func (r *Repositories) readBlobs(ctx context.Context, spec cmdSpec, files []TreeFile, want []int) error {
	if len(want) == 0 {
		return nil
	}
	var in strings.Builder
	for _, i := range want {
		in.WriteString(files[i].Blob + "\n")
	}
	spec.stdin = in.String()
	out, err := r.run(ctx, spec, "cat-file", "--batch")
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return &Error{Step: "read", Command: "cat-file", Detail: fmt.Sprintf(format, args...)}
	}
	for _, i := range want {
		header, rest, ok := strings.Cut(out, "\n")
		f := strings.Fields(header)
		if !ok || len(f) != 3 || f[0] != files[i].Blob || f[1] != "blob" {
			return bad("unexpected answer %q for %s", header, files[i].Blob)
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n != files[i].Size || int64(len(rest)) < n+1 {
			return bad("unexpected size in %q for %s", header, files[i].Blob)
		}
		files[i].Data = []byte(rest[:n])
		out = rest[n+1:]
	}
	return nil
}

// cappedBuffer holds what is written up to max bytes, then fails the
// write (and so the command writing).
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		return 0, errors.New("output too large")
	}
	return b.Buffer.Write(p)
}

var _ io.Writer = (*cappedBuffer)(nil)
