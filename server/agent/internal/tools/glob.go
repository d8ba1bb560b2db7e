package tools

import (
	"errors"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// relTo returns the slash path p relative to the listed folder start, which
// is what a glob is matched against.
func relTo(start, p string) string {
	start = filepath.ToSlash(start)
	if start == "." {
		return p
	}
	return strings.TrimPrefix(p, start+"/")
}

// compileGlob turns a glob into a matcher of slash paths. A glob without
// "/" is matched against the file name alone, as models write "*.md" to
// mean any Markdown file; one with "/" is matched against the whole path,
// where "**" spans folders. Braces list alternatives ("*.{md,mdx}").
func compileGlob(glob string) (func(string) bool, error) {
	if glob == "" {
		return func(string) bool { return true }, nil
	}
	var b strings.Builder
	b.WriteString("^")
	inBraces := false
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '{' && !inBraces:
			b.WriteString("(?:")
			inBraces = true
		case c == '}' && inBraces:
			b.WriteString(")")
			inBraces = false
		case c == ',' && inBraces:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if inBraces {
		return nil, errors.New("unclosed {")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	if !strings.Contains(glob, "/") {
		return func(p string) bool { return re.MatchString(path.Base(p)) }, nil
	}
	return re.MatchString, nil
}
