package docs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// Defaults of Options.
const (
	// DefaultMaxFileBytes is the largest page file read. Pages are a few
	// KiB, generated API references a few hundred; a larger file is
	// skipped, with the reason, rather than indexed.
	DefaultMaxFileBytes = 4 << 20
	// DefaultMaxPages is the most pages a site may have: well above the
	// largest documentation sites, and a bound on what one update costs.
	DefaultMaxPages = 20000
)

// Options says how a repository's files map to a site's pages. The zero
// value is the common conventions at the repository's root.
type Options struct {
	// ProjectID is set on every page.
	ProjectID string
	// Root is the folder of the documentation in the repository,
	// slash-separated ("docs"); "" for the repository's root. Paths are
	// served from it, and docs.json or mint.json is read there.
	Root string
	// Exclude names more folders to leave out, anywhere under Root,
	// beside the ones always left out (node_modules, hidden folders, and
	// Root's snippets folder).
	Exclude []string
	// MaxFileBytes: larger page files are skipped with the reason.
	// Default DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxPages: more page files than this is an error. Default
	// DefaultMaxPages.
	MaxPages int
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxFileBytes < 0 || o.MaxPages < 0 {
		return o, errors.New("docs: Options.MaxFileBytes and MaxPages must not be negative")
	}
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxPages == 0 {
		o.MaxPages = DefaultMaxPages
	}
	root := strings.Trim(o.Root, "/")
	if root == "" {
		root = "."
	}
	if !fs.ValidPath(root) {
		return o, fmt.Errorf("docs: Options.Root %q is not a folder path inside the repository", o.Root)
	}
	o.Root = root
	return o, nil
}

// Wants reports whether file (slash-separated, from the repository's
// root) is one Read reads: a Markdown or MDX file under Root, outside the
// folders left out, or Root's docs.json or mint.json. A reader of a
// repository (gitrepo's ReadTree) reads only those.
func (o Options) Wants(file string) bool {
	o, err := o.withDefaults()
	if err != nil || !fs.ValidPath(file) {
		return false
	}
	rel, ok := o.relative(file)
	if !ok {
		return false
	}
	if rel == "docs.json" || rel == "mint.json" {
		return true
	}
	if _, ok := pageStem(rel); !ok {
		return false
	}
	parts := strings.Split(rel, "/")
	for i, dir := range parts[:len(parts)-1] {
		if o.excluded(dir, i) {
			return false
		}
	}
	return !strings.HasPrefix(parts[len(parts)-1], ".")
}

// relative is file relative to Root.
func (o Options) relative(file string) (string, bool) {
	if o.Root == "." {
		return file, true
	}
	return strings.CutPrefix(file, o.Root+"/")
}

// excluded reports whether the folder name, depth folders below Root,
// holds no pages.
func (o Options) excluded(name string, depth int) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || depth == 0 && name == "snippets" ||
		slices.Contains(o.Exclude, name)
}

// Skipped is a file Read did not index, and why.
type Skipped struct {
	File, Reason string
}

// Result is a site read from a repository tree.
type Result struct {
	// Pages are sorted by Path.
	Pages []store.DocPage
	// Skipped are the files that looked like pages and are not indexed:
	// links, files too large, hidden or noindex pages, a second file for
	// the same path. Sorted by File.
	Skipped []Skipped
	// Problems are what was wrong in files that were indexed all the
	// same, or in the navigation file (then read as absent).
	Problems []*Problem
	// Navigation is the navigation file read ("docs.json", "mint.json")
	// or "" for none.
	Navigation string
}

// Read reads the site in fsys, a repository's files at one commit: a work
// tree (os.Root's FS, which refuses to leave the folder) or gitrepo's
// ReadTree. Files are read only if Options.Wants them; symbolic links and
// other files that are not regular are skipped, never followed. It fails
// only when fsys cannot be read or holds more than Options.MaxPages pages.
func Read(fsys fs.FS, opts Options) (*Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	res := &Result{}
	files := map[string][]byte{} // relative to Root
	err = fs.WalkDir(fsys, opts.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == opts.Root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // no docs folder: no pages
			}
			return err
		}
		if p == opts.Root {
			return nil
		}
		rel, _ := opts.relative(p)
		if d.IsDir() {
			if opts.excluded(d.Name(), strings.Count(rel, "/")) {
				return fs.SkipDir
			}
			return nil
		}
		if !opts.Wants(p) {
			return nil
		}
		if !d.Type().IsRegular() {
			what := "not a regular file"
			if d.Type()&fs.ModeSymlink != 0 {
				what = "a symbolic link, not followed"
			}
			res.Skipped = append(res.Skipped, Skipped{File: p, Reason: what})
			return nil
		}
		if _, ok := pageStem(rel); ok && len(files) >= opts.MaxPages {
			return fmt.Errorf("docs: more than %d page files under %q (Options.MaxPages)", opts.MaxPages, opts.Root)
		}
		data, reason, err := readBounded(fsys, p, d, opts.MaxFileBytes)
		if err != nil {
			return err
		}
		if reason != "" {
			res.Skipped = append(res.Skipped, Skipped{File: p, Reason: reason})
			return nil
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("docs: reading the files: %w", err)
	}

	nav := readNavigation(files, opts, res)
	pages := map[string]string{} // URL path → rel of the file serving it
	rels := slices.Sorted(mapsKeys(files))
	slices.SortStableFunc(rels, func(a, b string) int { return indexRank(a) - indexRank(b) })
	for _, rel := range rels {
		p, ok := PagePath(rel)
		if !ok {
			continue
		}
		file := path.Join(opts.Root, rel)
		if other, dup := pages[p]; dup {
			res.Skipped = append(res.Skipped, Skipped{File: file,
				Reason: "serves the same path " + p + " as " + path.Join(opts.Root, other)})
			continue
		}
		pages[p] = rel
		page, reason := buildPage(file, p, files[rel], nav, &res.Problems)
		if reason != "" {
			res.Skipped = append(res.Skipped, Skipped{File: file, Reason: reason})
			continue
		}
		page.ProjectID = opts.ProjectID
		res.Pages = append(res.Pages, page)
	}
	slices.SortFunc(res.Pages, func(a, b store.DocPage) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(res.Skipped, func(a, b Skipped) int { return strings.Compare(a.File, b.File) })
	return res, nil
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readBounded reads the file at p, up to max bytes; reason says why not
// when it is larger.
func readBounded(fsys fs.FS, p string, d fs.DirEntry, max int64) ([]byte, string, error) {
	tooLarge := fmt.Sprintf("larger than %d bytes (Options.MaxFileBytes)", max)
	if info, err := d.Info(); err == nil && info.Size() > max {
		return nil, tooLarge, nil
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > max {
		return nil, tooLarge, nil
	}
	return data, "", nil
}

// readNavigation reads Root's docs.json, or else its mint.json; a file
// that cannot be read is a Problem, and the site is read without it.
func readNavigation(files map[string][]byte, opts Options, res *Result) *Navigation {
	for _, name := range []string{"docs.json", "mint.json"} {
		data, ok := files[name]
		if !ok {
			continue
		}
		nav, err := ParseNavigation(name, data)
		if err != nil {
			res.Problems = append(res.Problems, &Problem{File: path.Join(opts.Root, name),
				Message: err.Error() + "; the pages are read without a navigation"})
			return nil
		}
		res.Navigation = name
		return nav
	}
	return nil
}

// buildPage makes the page of file served at urlPath, or says why it is
// not indexed.
func buildPage(file, urlPath string, data []byte, nav *Navigation, problems *[]*Problem) (store.DocPage, string) {
	parsed := Parse(file, data)
	*problems = append(*problems, parsed.Problems...)
	fm := parsed.FrontMatter
	if fm.NoIndex != nil && *fm.NoIndex {
		return store.DocPage{}, "noindex: true in its front matter"
	}
	if fm.Searchable != nil && !*fm.Searchable {
		return store.DocPage{}, "searchable: false in its front matter"
	}
	page := store.DocPage{Path: urlPath, File: file, Description: fm.Description, Sections: parsed.Sections}
	if nav != nil {
		entry, listed := nav.Lookup(urlPath)
		hidden := !listed || entry.Hidden
		why := "not in " + nav.File + "'s navigation"
		if entry.Hidden {
			why = "under a hidden part of " + nav.File + "'s navigation"
		}
		if listed && fm.Hidden != nil {
			hidden = *fm.Hidden
			why = "hidden: true in its front matter"
		}
		if hidden && !nav.IndexHidden {
			return store.DocPage{}, "hidden: " + why + " (the site's search leaves hidden pages out)"
		}
		page.Groups, page.Version, page.Language = entry.Groups, entry.Version, entry.Language
		if v := fm.Fields["version"]; v != "" && nav.File == "mint.json" {
			page.Version = v // mint.json: a page's version overrides its group's
		}
	} else if fm.Hidden != nil && *fm.Hidden {
		return store.DocPage{}, "hidden: true in its front matter (the site's search leaves hidden pages out)"
	}
	page.Title = firstOf(fm.Title, fm.SidebarTitle, parsed.H1, titleFromFile(file))
	return page, ""
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// ReaderVersion changes whenever this package reads the same file into
// different pages (version 2: code blocks without their fences). An index
// read by another version is read again whole: server/docsupdate keeps it
// in the fingerprint of the reader's settings.
const ReaderVersion = 2
