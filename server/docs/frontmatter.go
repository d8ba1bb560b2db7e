package docs

import (
	"fmt"
	"strconv"
	"strings"
)

// FrontMatter is what Read takes from a page's front matter.
//
// The block is YAML, but documentation's front matter is flat: keys with
// scalars, a few lists (keywords), now and then a nested block of custom
// metadata. This package adds no YAML library; it reads that subset, and
// reads it strictly (every line is either understood or an error naming
// its line):
//
//   - a top-level line is "key: value", the key plain or quoted, or a
//     comment (#), or blank; a tab in indentation is an error, as in YAML;
//   - a value is a plain scalar (which may continue on more indented
//     lines), a single- or double-quoted scalar on one line, a block
//     scalar (| or >, with - or + chomping), a flow list on one line
//     ([a, "b"]), or nothing followed by an indented block: a list of
//     "- item" lines, or a nested mapping, which is skipped whole;
//   - a key given twice is an error, as in YAML.
//
// The keys read are title, description and sidebarTitle (scalars), and
// hidden, noindex and searchable (booleans: true or false in any of YAML's
// spellings, True, TRUE, ...); one of these holding anything else is an
// error too. Every other key with a scalar value is kept in Fields.
type FrontMatter struct {
	Title, Description, SidebarTitle string
	// Hidden, NoIndex and Searchable are nil when the key is absent:
	// hidden: false means something (a page under a hidden group shown
	// again), absent does not.
	Hidden, NoIndex, Searchable *bool
	// Fields holds the other keys with a scalar value, as read.
	Fields map[string]string
}

// Problem is something wrong in a file that Read reported and went past:
// the page is indexed all the same (without its front matter, say).
type Problem struct {
	File string
	// Line is 1-based; 0 when the problem is the file's as a whole.
	Line    int
	Message string
}

// Error is "file:line: message".
func (p *Problem) Error() string {
	if p.Line == 0 {
		return p.File + ": " + p.Message
	}
	return p.File + ":" + strconv.Itoa(p.Line) + ": " + p.Message
}

// splitFrontMatter cuts the front matter block from the start of text:
// the lines between a first line "---" and the next line "---". It returns
// the block's lines, the rest of the text and the number of lines before
// it. found is false when text has no block; closed is false when the
// first line opens one that never closes (the text is then all body).
func splitFrontMatter(text string) (block []string, body string, bodyLine int, found, closed bool) {
	first, rest, ok := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t\r") != "---" {
		return nil, text, 0, false, false
	}
	if !ok {
		return nil, text, 0, true, false
	}
	n := 1
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		n++
		if strings.TrimRight(line, " \t\r") == "---" {
			return block, after, n, true, true
		}
		block = append(block, strings.TrimSuffix(line, "\r"))
		rest = after
	}
	return nil, text, 0, true, false
}

// fmError is a front matter error at a line of the block (1-based, of the
// file: the opening --- is line 1).
type fmError struct {
	line int
	msg  string
}

// parseFrontMatter reads block (the lines between the --- lines).
func parseFrontMatter(block []string) (FrontMatter, *fmError) {
	var fm FrontMatter
	seen := map[string]bool{}
	fail := func(i int, format string, args ...any) (FrontMatter, *fmError) {
		return FrontMatter{}, &fmError{line: i + 2, msg: fmt.Sprintf(format, args...)}
	}
	for i := 0; i < len(block); i++ {
		line := block[i]
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || trimmed[0] == '#' {
			continue // blank, or a comment
		}
		if line[0] == '\t' {
			return fail(i, "front matter indented with a tab")
		}
		if line[0] == ' ' {
			return fail(i, "front matter line indented where a key was expected")
		}
		key, rest, err := frontKey(line)
		if err != "" {
			return fail(i, "%s", err)
		}
		if seen[key] {
			return fail(i, "front matter key %q given twice", key)
		}
		seen[key] = true
		rest = strings.TrimLeft(rest, " ")
		// The indented lines after this one belong to its value.
		j := i + 1
		for j < len(block) && (strings.TrimSpace(block[j]) == "" || block[j][0] == ' ' || block[j][0] == '\t') {
			j++
		}
		for j > i+1 && strings.TrimSpace(block[j-1]) == "" {
			j--
		}
		more := block[i+1 : j]
		for k, m := range more {
			if strings.HasPrefix(m, "\t") || strings.HasPrefix(strings.TrimLeft(m, " "), "\t") && strings.TrimSpace(m) != "" {
				return fail(i+1+k, "front matter indented with a tab")
			}
		}
		v, kind, verr, at := frontValue(rest, more)
		if verr != "" {
			return fail(i+at, "front matter key %q: %s", key, verr)
		}
		i = j - 1
		switch key {
		case "title", "description", "sidebarTitle":
			if kind != scalar {
				return fail(i, "front matter key %q must be a single value", key)
			}
			switch key {
			case "title":
				fm.Title = v
			case "description":
				fm.Description = v
			default:
				fm.SidebarTitle = v
			}
		case "hidden", "noindex", "searchable":
			b, ok := yamlBool(v)
			if kind != scalar || !ok {
				return fail(i, "front matter key %q must be true or false", key)
			}
			switch key {
			case "hidden":
				fm.Hidden = &b
			case "noindex":
				fm.NoIndex = &b
			default:
				fm.Searchable = &b
			}
		default:
			if kind == scalar {
				if fm.Fields == nil {
					fm.Fields = map[string]string{}
				}
				fm.Fields[key] = v
			}
		}
	}
	return fm, nil
}

// yamlBool reads YAML's booleans (the core schema's spellings).
func yamlBool(s string) (bool, bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// frontKey reads the key of a top-level line and returns the text after
// its colon.
func frontKey(line string) (key, rest, err string) {
	if line[0] == '"' || line[0] == '\'' {
		k, after, e := quoted(line)
		if e != "" {
			return "", "", e
		}
		if !strings.HasPrefix(after, ":") {
			return "", "", "front matter key not followed by ':'"
		}
		after = after[1:]
		if after != "" && after[0] != ' ' {
			return "", "", "front matter key not followed by ': '"
		}
		return k, after, ""
	}
	switch line[0] {
	case '-', '[', '{', '?', '&', '*', '!', '|', '>', '%', '@', '`':
		return "", "", fmt.Sprintf("front matter line starts with %q: not a key (this reader takes flat key: value lines)", line[0])
	}
	idx := strings.Index(line, ": ")
	if idx < 0 {
		if strings.HasSuffix(line, ":") {
			idx = len(line) - 1
		} else {
			return "", "", "front matter line is not 'key: value'"
		}
	}
	return strings.TrimRight(line[:idx], " "), line[idx+1:], ""
}

// kinds of front matter values.
const (
	scalar = iota
	list
	nested
)

// frontValue reads a value: rest is what follows the key's colon on its
// line, more the indented lines after it. at is the offset, from the
// key's line, of the line an error is on.
func frontValue(rest string, more []string) (v string, kind int, err string, at int) {
	rest = stripComment(rest)
	switch {
	case rest == "":
		if len(more) == 0 {
			return "", scalar, "", 0
		}
		first := strings.TrimLeft(more[0], " ")
		if first == "-" || strings.HasPrefix(first, "- ") {
			for k, m := range more {
				t := strings.TrimLeft(m, " ")
				if t == "" || t[0] == '#' {
					continue
				}
				if t != "-" && !strings.HasPrefix(t, "- ") {
					return "", 0, "a list mixes items and other lines (this reader takes lists of single values)", k + 1
				}
				if _, _, e := flowItem(strings.TrimSpace(strings.TrimPrefix(t, "-"))); e != "" {
					return "", 0, e, k + 1
				}
			}
			return "", list, "", 0
		}
		// A nested mapping: custom metadata this package does not read.
		return "", nested, "", 0
	case rest[0] == '"' || rest[0] == '\'':
		s, after, e := quoted(rest)
		if e != "" {
			return "", 0, e, 0
		}
		if stripComment(after) != "" {
			return "", 0, "text after a quoted value", 0
		}
		if len(more) > 0 {
			return "", 0, "a quoted value continued on the next line (this reader takes quoted values on one line)", 1
		}
		return s, scalar, "", 0
	case rest[0] == '|' || rest[0] == '>':
		if ind := strings.TrimLeft(rest[1:], "+-"); ind != "" {
			return "", 0, "block scalar indicator with an indentation digit or text after it", 0
		}
		return blockScalar(rest, more), scalar, "", 0
	case rest[0] == '[':
		if len(more) > 0 {
			return "", 0, "a list continued on the next line (this reader takes [a, b] lists on one line)", 1
		}
		if e := flowList(rest); e != "" {
			return "", 0, e, 0
		}
		return "", list, "", 0
	case rest[0] == '{':
		// A flow mapping: custom metadata, not read.
		if len(more) > 0 {
			return "", 0, "a {...} value continued on the next line", 1
		}
		if !strings.HasSuffix(rest, "}") {
			return "", 0, "a {...} value without its closing brace", 0
		}
		return "", nested, "", 0
	}
	// A plain scalar, folded with its continuation lines.
	parts := []string{rest}
	for _, m := range more {
		if t := strings.TrimSpace(m); t != "" {
			parts = append(parts, stripComment(t))
		}
	}
	return strings.Join(parts, " "), scalar, "", 0
}

// stripComment removes a " #" comment and the spaces around a plain value.
func stripComment(s string) string {
	if s == "" {
		return s
	}
	if s[0] == '"' || s[0] == '\'' {
		return strings.TrimSpace(s)
	}
	if strings.HasPrefix(s, "#") {
		return ""
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// quoted reads a quoted scalar at the start of s and returns it and what
// follows its closing quote.
func quoted(s string) (v, after, err string) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '\'' && c == '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:], ""
		case q == '"' && c == '"':
			return b.String(), s[i+1:], ""
		case q == '"' && c == '\\':
			if i+1 >= len(s) {
				return "", "", "a double-quoted value ends in a backslash"
			}
			i++
			switch e := s[i]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case ' ':
				b.WriteByte(' ')
			case 'u', 'x':
				n := 4
				if e == 'x' {
					n = 2
				}
				if i+n >= len(s) {
					return "", "", "a double-quoted value with a short \\" + string(e) + " escape"
				}
				r, perr := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
				if perr != nil {
					return "", "", "a double-quoted value with a bad \\" + string(e) + " escape"
				}
				b.WriteRune(rune(r))
				i += n
			default:
				return "", "", fmt.Sprintf("a double-quoted value with the unknown escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", "a quoted value without its closing quote"
}

// flowList checks a one-line [a, "b"] list of scalars.
func flowList(s string) string {
	if !strings.HasSuffix(s, "]") {
		return "a [...] list without its closing bracket"
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	for inner != "" {
		_, after, e := flowItem(inner)
		if e != "" {
			return e
		}
		after = strings.TrimSpace(after)
		if after == "" {
			break
		}
		if after[0] != ',' {
			return "list items not separated by commas"
		}
		inner = strings.TrimSpace(after[1:])
	}
	return ""
}

// flowItem reads one scalar of a list, up to a comma or the end.
func flowItem(s string) (v, after, err string) {
	if s == "" {
		return "", "", ""
	}
	if s[0] == '"' || s[0] == '\'' {
		return quoted(s)
	}
	if strings.ContainsAny(s[:1], "[]{}") {
		return "", "", "a nested list or mapping in a list (this reader takes lists of single values)"
	}
	if i := strings.IndexByte(s, ','); i >= 0 {
		return strings.TrimSpace(s[:i]), s[i:], ""
	}
	return strings.TrimSpace(s), "", ""
}

// blockScalar reads a | or > block scalar's lines.
func blockScalar(indicator string, more []string) string {
	indent := -1
	var lines []string
	for _, m := range more {
		t := strings.TrimLeft(m, " ")
		if t == "" {
			lines = append(lines, "")
			continue
		}
		if indent < 0 {
			indent = len(m) - len(t)
		}
		lines = append(lines, m[min(indent, len(m)-len(t)):])
	}
	keep := strings.Contains(indicator, "+")
	if !keep {
		for len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
	}
	if indicator[0] == '|' {
		return strings.Join(lines, "\n")
	}
	var b strings.Builder
	for i, l := range lines {
		switch {
		case i == 0:
		case l == "" || lines[i-1] == "":
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return strings.TrimSpace(b.String())
}
