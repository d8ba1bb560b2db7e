package docs

import (
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// Parsed is one Markdown or MDX file as the index reads it.
type Parsed struct {
	FrontMatter FrontMatter
	// H1 is the text of the first level-1 heading, "" if none: a page
	// without a title in its front matter often has one.
	H1 string
	// Sections are the file's parts by heading, in order, with their
	// anchors unique on the page. The first has no heading when text
	// comes before the first heading; a file with no text has none.
	Sections []store.DocSection
	// Problems are what was wrong and gone past: a front matter block
	// that could not be read (the page is then read without it).
	Problems []*Problem
}

// Parse reads a Markdown (.md) or MDX (.mdx, by file's extension) file.
// Invalid UTF-8 is replaced with U+FFFD and NUL bytes likewise, as
// CommonMark does; Parse never fails and takes time linear in len(data).
//
// What is read, block by block: front matter (see FrontMatter); ATX
// headings (# to ######, with an optional closing run of #) and setext
// headings (a paragraph underlined with = or -), which start sections;
// fenced code blocks (``` or ~~~, any indentation, as inside MDX
// components), whose lines go to their section's Code as written, without
// the fences (a snippet or an answer shows the code, not its markup),
// blocks apart by a blank line; paragraphs, list items, block quotes and table rows
// as text (see plain for the inline rules), a table's delimiter row and
// thematic breaks dropped; HTML comments, MDX comments ({/* */}) and, in
// MDX, import and export statements dropped. MDX has no indented code
// blocks (indentation is the components' own), and neither has this
// reader: indented text is text.
func Parse(file string, data []byte) Parsed {
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	text = strings.ReplaceAll(text, "\x00", "\uFFFD")
	var out Parsed
	block, body, bodyLine, found, closed := splitFrontMatter(text)
	switch {
	case found && !closed:
		out.Problems = append(out.Problems, &Problem{File: file, Line: 1,
			Message: "front matter opened with --- is not closed by a --- line; the file is read as having none"})
	case found:
		fm, err := parseFrontMatter(block)
		if err != nil {
			out.Problems = append(out.Problems, &Problem{File: file, Line: err.line,
				Message: err.msg + "; the page is read without its front matter"})
		} else {
			out.FrontMatter = fm
		}
	}
	_ = bodyLine
	b := blockParser{mdx: isMDX(file)}
	b.parse(body)
	out.Sections, out.H1 = b.sections, b.h1
	return out
}

func isMDX(file string) bool { return strings.HasSuffix(strings.ToLower(file), ".mdx") }

// blockParser splits a body into sections.
type blockParser struct {
	mdx      bool
	sections []store.DocSection
	h1       string
	anchors  anchors

	para []string // the lines of the paragraph being read
	// text and code of the current section
	text, code strings.Builder
	heading    string
	anchor     string
	started    bool // a section is open (a heading seen, or text before one)
}

func (b *blockParser) parse(body string) {
	var (
		fence       string // the opening fence's run (``` or ~~~~...), "" outside
		fenceIndent int
		skipUntil   string // the end of a multi-line comment being skipped
		inESM       bool
	)
	for rest := body; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		trimmed := strings.TrimLeft(line, " \t")

		if fence != "" {
			if isClosingFence(trimmed, fence) {
				fence = ""
				continue
			}
			b.code.WriteString(dedent(line, fenceIndent) + "\n")
			continue
		}
		if skipUntil != "" {
			if strings.Contains(line, skipUntil) {
				skipUntil = ""
			}
			continue
		}
		if strings.TrimSpace(trimmed) == "" {
			b.flush()
			inESM = false
			continue
		}
		if inESM {
			continue
		}
		if run, ok := openingFence(trimmed); ok {
			b.flush()
			b.open()
			fence, fenceIndent = run, len(line)-len(trimmed)
			if b.code.Len() > 0 {
				b.code.WriteString("\n")
			}
			continue
		}
		if level, htext, ok := atxHeading(trimmed); ok {
			b.flush()
			b.startSection(level, htext)
			continue
		}
		if c := setextUnderline(trimmed); c != 0 && b.paraIsPlain() {
			level := 1
			if c == '-' {
				level = 2
			}
			htext := strings.Join(trimAll(b.para), " ")
			b.para = b.para[:0]
			b.startSection(level, htext)
			continue
		}
		if isThematicBreak(trimmed) {
			b.flush()
			continue
		}
		if b.mdx && line == trimmed && len(b.para) == 0 &&
			(strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "export ")) {
			inESM = true // to the next blank line, as MDX reads it
			continue
		}
		if strings.HasPrefix(trimmed, "<!--") && !strings.Contains(trimmed[4:], "-->") {
			b.flush()
			skipUntil = "-->"
			continue
		}
		if b.mdx && strings.HasPrefix(trimmed, "{/*") && !strings.Contains(trimmed[3:], "*/}") {
			b.flush()
			skipUntil = "*/}"
			continue
		}
		b.para = append(b.para, line)
	}
	b.flush()
	b.closeSection()
}

// open makes sure a section is open, for text before any heading.
func (b *blockParser) open() { b.started = true }

// flush adds the paragraph read so far to the section's text.
func (b *blockParser) flush() {
	if len(b.para) == 0 {
		return
	}
	lines := b.para
	b.para = b.para[:0]
	table := false
	for _, l := range lines {
		if isDelimiterRow(l) {
			table = true
			break
		}
	}
	var src strings.Builder
	for _, l := range lines {
		l = stripContainers(strings.TrimLeft(l, " \t"))
		if table {
			if isDelimiterRow(l) {
				continue
			}
			l = tableCells(l)
		}
		src.WriteString(l)
		src.WriteByte('\n')
	}
	t := plain(src.String(), b.mdx)
	if t == "" {
		return
	}
	b.open()
	if b.text.Len() > 0 {
		b.text.WriteByte('\n')
	}
	b.text.WriteString(t)
}

// startSection closes the current section and opens one under a heading.
func (b *blockParser) startSection(level int, raw string) {
	b.closeSection()
	raw, id, custom := customID(raw)
	text := plain(raw, b.mdx)
	if !custom {
		id = Anchor(text)
	}
	b.heading, b.anchor, b.started = text, b.anchors.unique(id), true
	if level == 1 && b.h1 == "" {
		b.h1 = text
	}
}

func (b *blockParser) closeSection() {
	if b.started {
		b.sections = append(b.sections, store.DocSection{
			Anchor: b.anchor, Heading: b.heading, Text: b.text.String(), Code: b.code.String(),
		})
	}
	b.text.Reset()
	b.code.Reset()
	b.heading, b.anchor, b.started = "", "", false
}

// paraIsPlain reports whether the paragraph being read may become a
// setext heading: it is one, and not a list, quote, table or tag.
func (b *blockParser) paraIsPlain() bool {
	if len(b.para) == 0 {
		return false
	}
	first := strings.TrimLeft(b.para[0], " \t")
	if first == "" || strings.ContainsRune("<>|{", rune(first[0])) {
		return false
	}
	return stripContainers(first) == first
}

func trimAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// openingFence reports whether line (indentation removed) opens a fenced
// code block, and its fence run.
func openingFence(line string) (string, bool) {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return "", false
	}
	c := line[0]
	n := 0
	for n < len(line) && line[n] == c {
		n++
	}
	if n < 3 {
		return "", false
	}
	if c == '`' && strings.IndexByte(line[n:], '`') >= 0 {
		return "", false // an inline code span, not a fence
	}
	return line[:n], true
}

// isClosingFence reports whether line (indentation removed) closes the
// fence: the same character, at least as many, nothing after.
func isClosingFence(line, fence string) bool {
	n := 0
	for n < len(line) && line[n] == fence[0] {
		n++
	}
	return n >= len(fence) && strings.TrimSpace(line[n:]) == ""
}

// dedent removes up to n columns of leading spaces or tabs.
func dedent(line string, n int) string {
	i := 0
	for i < n && i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return line[i:]
}

// atxHeading reads an ATX heading (indentation removed).
func atxHeading(line string) (int, string, bool) {
	n := 0
	for n < len(line) && n < 7 && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(line) && line[n] != ' ' && line[n] != '\t') {
		return 0, "", false
	}
	text := strings.TrimSpace(line[n:])
	// A closing run of #, after a space (or alone), is not text.
	t := strings.TrimRight(text, "#")
	if t == "" {
		text = ""
	} else if len(t) < len(text) && (strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		text = strings.TrimSpace(t)
	}
	return n, text, true
}

// setextUnderline is '=' or '-' if line underlines a setext heading, else 0.
func setextUnderline(line string) byte {
	t := strings.TrimRight(line, " \t")
	if t == "" || (t[0] != '=' && t[0] != '-') {
		return 0
	}
	if strings.Trim(t, t[:1]) != "" {
		return 0
	}
	return t[0]
}

// isThematicBreak: three or more -, * or _, spaces between allowed.
func isThematicBreak(line string) bool {
	t := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(line), " ", ""), "\t", "")
	if len(t) < 3 || (t[0] != '-' && t[0] != '*' && t[0] != '_') {
		return false
	}
	return strings.Trim(t, t[:1]) == ""
}

// stripContainers removes block quote markers, list markers and task
// boxes from the start of a line.
func stripContainers(l string) string {
	for {
		t := strings.TrimLeft(l, " \t")
		switch {
		case strings.HasPrefix(t, ">"):
			l = t[1:]
			continue
		case len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t'):
			l = t[2:]
			continue
		case strings.HasPrefix(t, "[ ] "), strings.HasPrefix(t, "[x] "), strings.HasPrefix(t, "[X] "):
			l = t[4:]
			continue
		}
		n := 0
		for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n > 0 && n+1 < len(t) && (t[n] == '.' || t[n] == ')') && (t[n+1] == ' ' || t[n+1] == '\t') {
			l = t[n+2:]
			continue
		}
		return t
	}
}

// isDelimiterRow reports whether l is a table's delimiter row
// (| --- | :-: |, or without the outer pipes).
func isDelimiterRow(l string) bool {
	t := strings.TrimSpace(l)
	if !strings.Contains(t, "-") || strings.Trim(t, "|-: \t") != "" {
		return false
	}
	return strings.Contains(t, "|") || strings.HasPrefix(t, ":")
}

// tableCells makes a table row's pipes spaces, escaped pipes kept.
func tableCells(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l) && l[i+1] == '|':
			b.WriteByte('|')
			i++
		case l[i] == '|':
			b.WriteString(" \t ")
		default:
			b.WriteByte(l[i])
		}
	}
	return b.String()
}
