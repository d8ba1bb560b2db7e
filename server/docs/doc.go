// Package docs reads a project's documentation into the index's pages
// (store.DocPage): the Markdown and MDX files of a repository tree, each at
// the URL path the docs site serves it, split into sections by heading,
// with its prose stripped of markup and its code blocks kept apart.
//
// It is pure: it reads an fs.FS (a work tree through os.Root.FS, or a
// commit's files through gitrepo's ReadTree) and touches no store and no
// network. The repositories are written by others, so nothing read is
// trusted: symbolic links are never followed, files past a size are
// skipped with the reason, and every parser here runs in time linear in
// its input, however deep or long what it is given.
//
// The conventions are the hosted docs platform's, where it documents them:
//
//   - Pages are .md and .mdx files; a file's URL path is its path from the
//     docs root without the extension, case kept; index and README files
//     give their folder's path ("/" at the root). Folders named
//     node_modules, hidden ones (".git", ".github") and the root's snippets
//     folder (reusable MDX fragments on the platform) hold no pages.
//   - Front matter is the YAML block between --- lines at the top; this
//     package reads the flat subset documentation uses (see FrontMatter),
//     strictly: a block it cannot read is a Problem naming the file and
//     line, and the page is indexed without it.
//   - A heading's anchor is made as the platform makes heading ids (see
//     Anchor), "{#custom-id}" after a heading overrides it.
//   - A docs.json (or the older mint.json) beside the pages gives them
//     their groups, version and language; the platform leaves pages that
//     are hidden (not in the navigation, hidden: true, under a hidden tab
//     or group) out of its site search unless the site asks otherwise, and
//     pages with noindex: true or searchable: false always; so does Read.
//     See Navigation.
package docs
