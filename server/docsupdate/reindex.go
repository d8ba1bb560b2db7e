package docsupdate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/docs"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/store"
)

// TreeReader reads a repository's files at a ref: gitrepo's
// *Repositories, through the repository's mirror.
type TreeReader interface {
	ReadTree(ctx context.Context, repository string, spec gitrepo.TreeSpec) (*gitrepo.Tree, error)
}

// optionsFile is the file record under which the index keeps the reader's
// settings (a fingerprint of docs.Options): a path no repository file has,
// since tree paths never start with a slash. Recorded in the same
// UpdateDocs as the pages, it says whether the index was read with the
// settings in force; when not, every page is read again.
const optionsFile = "/docsapi:options"

// fingerprint identifies the settings that decide which files are pages
// and how they are read, and the version of the reader (docs.ReaderVersion)
// that reads them: a server that reads pages differently reads them all
// again.
func fingerprint(o docs.Options, reader int) string {
	b, _ := json.Marshal(struct {
		Root         string
		Exclude      []string
		MaxFileBytes int64
		MaxPages     int
		Reader       int
	}{strings.Trim(o.Root, "/"), o.Exclude, o.MaxFileBytes, o.MaxPages, reader})
	sum := sha256.Sum256(b)
	return "options:" + hex.EncodeToString(sum[:16])
}

// outcome is what one re-read found and wrote.
type outcome struct {
	commit  store.DocsCommit
	full    bool   // every page read again
	why     string // why it was full ("" when incremental)
	read    int    // files whose contents were read
	pages   int    // pages written
	removed int    // files removed from the index
	changed bool   // anything written
	logs    []string
}

// reindex reads project's repository at its ref and brings its index to
// the commit read: only the files whose blobs changed are read, unless
// the navigation, the settings or the files serving a path changed, which
// can change every page. One UpdateDocs writes it all, so a failure
// anywhere before leaves the index as it was. The write is fenced by the
// update's lease (fence gives it as the write is sent, and its time is
// the write's), so that a run that lost its lease while it read cannot
// write a commit older than what the update's new holder wrote: the
// store refuses it with store.ErrLeaseLost.
func reindex(ctx context.Context, st store.Store, reader TreeReader, project store.Project, opts docs.Options, limits gitrepo.TreeSpec, fence func() store.DocsFence) (*outcome, error) {
	opts.ProjectID = project.ID
	state, err := st.DocsState(ctx, project.ID)
	if err != nil {
		return nil, fmt.Errorf("reading the index's state: %w", err)
	}
	fp := fingerprint(opts, docs.ReaderVersion)
	out := &outcome{}
	switch {
	case len(state.Files) == 0:
		out.full, out.why = true, "first index"
	case state.Files[optionsFile] != fp:
		out.full, out.why = true, "the reader's settings changed"
	}
	spec := limits
	spec.Ref, spec.Match = project.Ref, opts.Wants
	if !out.full {
		spec.Known = func(p, blob string) bool {
			// The navigation is always read: the pages read need it for
			// their groups, and its change is found from its blob.
			return !isNavigation(opts, p) && state.Files[p] == blob
		}
	}
	tree, err := reader.ReadTree(ctx, project.Repository, spec)
	if err != nil {
		return nil, err
	}
	if !out.full {
		if why := needsFull(opts, state, tree); why != "" {
			out.full, out.why = true, why
			spec.Known = nil
			// Read again, whole: the tree may have moved on since, which
			// is as good, as long as this tree is the one written.
			if tree, err = reader.ReadTree(ctx, project.Repository, spec); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range tree.Files {
		if f.Data != nil {
			out.read++
		}
	}
	res, err := docs.Read(tree.FS(), opts)
	if err != nil {
		return nil, err
	}
	out.commit = changes(state, tree)
	out.commit.SHA, out.commit.Ref, out.commit.Message = tree.Commit, tree.Ref, tree.Message
	out.logs = logLines(tree, res)

	u := store.DocsUpdate{ProjectID: project.ID, Commit: tree.Commit, Pages: res.Pages, Replace: out.full}
	for _, f := range tree.Files {
		// The navigation is read every time; unchanged, it is not written.
		if out.full || f.Data != nil && state.Files[f.Path] != f.Blob {
			u.Files = append(u.Files, store.DocFile{Path: f.Path, Blob: f.Blob})
		}
	}
	if out.full {
		u.Files = append(u.Files, store.DocFile{Path: optionsFile, Blob: fp})
	} else {
		inTree := make(map[string]bool, len(tree.Files))
		for _, f := range tree.Files {
			inTree[f.Path] = true
		}
		for _, p := range slices.Sorted(mapKeys(state.Files)) {
			if p != optionsFile && !inTree[p] {
				u.RemoveFiles = append(u.RemoveFiles, p)
			}
		}
	}
	out.pages, out.removed = len(res.Pages), len(out.commit.Removed)
	if !out.full && len(u.Files) == 0 && len(u.RemoveFiles) == 0 && state.Commit == tree.Commit {
		return out, nil // nothing to write: the index holds this commit already
	}
	f := fence()
	u.Fence, u.At = &f, f.Now
	if err := st.UpdateDocs(ctx, u); err != nil {
		return nil, fmt.Errorf("writing the index: %w", err)
	}
	out.changed = true
	return out, nil
}

// needsFull says why an incremental read of tree cannot stand, or "": the
// navigation changed (it sets every page's groups and which pages are
// searchable), or a file was added or removed that serves a path another
// file serves too (which of them is the page depends on both).
func needsFull(opts docs.Options, state store.DocsState, tree *gitrepo.Tree) string {
	inTree := map[string]string{}
	for _, f := range tree.Files {
		inTree[f.Path] = f.Blob
	}
	for p, blob := range state.Files {
		if isNavigation(opts, p) && inTree[p] != blob {
			return path.Base(p) + " changed"
		}
	}
	for p := range inTree {
		if _, known := state.Files[p]; isNavigation(opts, p) && !known {
			return path.Base(p) + " was added"
		}
	}
	servers := map[string]int{} // URL path → files serving it, old and new
	for p := range union(state.Files, inTree) {
		if served, ok := servedPath(opts, p); ok {
			servers[served]++
		}
	}
	for p := range union(state.Files, inTree) {
		_, before := state.Files[p]
		_, now := inTree[p]
		if served, ok := servedPath(opts, p); ok && before != now && servers[served] > 1 {
			return p + " serves the path " + served + " as another file does"
		}
	}
	return ""
}

// servedPath is the URL path file would serve, if it is a page file.
func servedPath(opts docs.Options, file string) (string, bool) {
	rel := file
	if root := strings.Trim(opts.Root, "/"); root != "" {
		var ok bool
		if rel, ok = strings.CutPrefix(file, root+"/"); !ok {
			return "", false
		}
	}
	return docs.PagePath(rel)
}

func isNavigation(opts docs.Options, file string) bool {
	root := strings.Trim(opts.Root, "/")
	for _, name := range []string{"docs.json", "mint.json"} {
		if file == path.Join(root, name) {
			return true
		}
	}
	return false
}

// changes compares the tree's files with the index's: added, modified
// and removed, sorted.
func changes(state store.DocsState, tree *gitrepo.Tree) store.DocsCommit {
	c := store.DocsCommit{Added: []string{}, Modified: []string{}, Removed: []string{}}
	inTree := make(map[string]bool, len(tree.Files))
	for _, f := range tree.Files {
		inTree[f.Path] = true
		switch blob, known := state.Files[f.Path]; {
		case !known:
			c.Added = append(c.Added, f.Path)
		case blob != f.Blob:
			c.Modified = append(c.Modified, f.Path)
		}
	}
	for p := range state.Files {
		if p != optionsFile && !inTree[p] {
			c.Removed = append(c.Removed, p)
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Modified)
	slices.Sort(c.Removed)
	return c
}

// logLines are the update's logs: what was skipped and why, and the
// problems found, by file and line.
func logLines(tree *gitrepo.Tree, res *docs.Result) []string {
	var lines []string
	for _, s := range tree.Skipped {
		lines = append(lines, "skipped "+s.Path+": "+s.Reason)
	}
	for _, s := range res.Skipped {
		lines = append(lines, "skipped "+s.File+": "+s.Reason)
	}
	for _, p := range res.Problems {
		lines = append(lines, p.Error())
	}
	return lines
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func union(a, b map[string]string) map[string]bool {
	u := make(map[string]bool, len(a)+len(b))
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	delete(u, optionsFile)
	return u
}
