package docs

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// plain is the text of inline Markdown and MDX s without its markup:
// emphasis, strikethrough and escapes dropped; links as their text, images
// as their alt text; code spans as their code; HTML and JSX tags dropped
// but a few attributes that readers see kept as text (see keptAttribute);
// HTML comments and, in MDX, {expressions} dropped; entities decoded;
// white space collapsed.
//
// Hostile input must not make it slow: every scan that looks ahead (for a
// tag's end, an expression's closing brace, a link's destination) draws on
// a budget proportional to len(s), and once that is spent the rest is
// read literally, so the work stays linear in len(s).
func plain(s string, mdx bool) string {
	p := inlineParser{s: s, mdx: mdx, budget: 16*len(s) + 1<<16}
	p.codeRuns()
	p.run()
	return strings.Join(strings.Fields(p.out.String()), " ")
}

type inlineParser struct {
	s      string
	mdx    bool
	budget int
	out    strings.Builder
	// runs: for each length of a backtick run, the positions of the runs
	// of that length, in order, and how many of them are behind us.
	runs    map[int][]int
	runNext map[int]int
	// noComment: no "-->" after the last comment opened, so no later one
	// closes either.
	noComment bool
}

// codeRuns notes every run of backticks, so that a code span's closing
// run is found without scanning ahead (CommonMark's own approach).
func (p *inlineParser) codeRuns() {
	s := p.s
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if p.runs == nil {
			p.runs, p.runNext = map[int][]int{}, map[int]int{}
		}
		p.runs[j-i] = append(p.runs[j-i], i)
		i = j
	}
}

// closingRun is the position of the first run of n backticks after i, or -1.
func (p *inlineParser) closingRun(i, n int) int {
	list := p.runs[n]
	k := p.runNext[n]
	for k < len(list) && list[k] <= i {
		k++
	}
	p.runNext[n] = k
	if k == len(list) {
		return -1
	}
	return list[k]
}

func (p *inlineParser) run() {
	s := p.s
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) && isASCIIPunct(s[i+1]) {
				p.out.WriteByte(s[i+1])
				i += 2
				continue
			}
		case '`':
			j := i
			for j < len(s) && s[j] == '`' {
				j++
			}
			if end := p.closingRun(i, j-i); end >= 0 {
				code := strings.ReplaceAll(s[j:end], "\n", " ")
				if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.TrimSpace(code) != "" {
					code = code[1 : len(code)-1]
				}
				p.out.WriteString(code)
				i = end + (j - i)
				continue
			}
			p.out.WriteString(s[i:j])
			i = j
			continue
		case '<':
			if n := p.comment(i); n > 0 {
				p.out.WriteByte(' ')
				i = n
				continue
			}
			if n := p.autolink(i); n > 0 {
				i = n
				continue
			}
			if n := p.tag(i); n > 0 {
				i = n
				continue
			}
		case '{':
			if p.mdx {
				if n := p.expression(i); n > 0 {
					i = n
					continue
				}
			}
		case '!':
			if i+1 < len(s) && s[i+1] == '[' {
				i++
				continue
			}
		case '[':
			p.out.WriteByte(' ')
			i++
			continue
		case ']':
			i = p.afterBracket(i + 1)
			continue
		case '*', '~', '_':
			j := i
			for j < len(s) && s[j] == c {
				j++
			}
			before, _ := utf8.DecodeLastRuneInString(s[:i])
			after, _ := utf8.DecodeRuneInString(s[j:])
			spaceBefore := i == 0 || unicode.IsSpace(before)
			spaceAfter := j == len(s) || unicode.IsSpace(after)
			literal := spaceBefore && spaceAfter
			if c == '_' && i > 0 && j < len(s) && isWordRune(before) && isWordRune(after) {
				literal = true // snake_case
			}
			if literal {
				p.out.WriteString(s[i:j])
			}
			i = j
			continue
		case '&':
			if n := entity(s, i); n > 0 {
				p.out.WriteString(html.UnescapeString(s[i:n]))
				i = n
				continue
			}
		}
		p.out.WriteByte(c)
		i++
	}
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// spend takes n from the budget, reporting whether there was enough.
func (p *inlineParser) spend(n int) bool {
	p.budget -= n
	return p.budget >= 0
}

// entity is the end of the character reference at i, or 0.
func entity(s string, i int) int {
	for j := i + 1; j < len(s) && j <= i+33; j++ {
		c := s[j]
		switch {
		case c == ';':
			if j > i+1 {
				return j + 1
			}
			return 0
		case c == '#' && j == i+1, c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return 0
		}
	}
	return 0
}

// comment is the end of the HTML comment at i, or 0.
func (p *inlineParser) comment(i int) int {
	if !strings.HasPrefix(p.s[i:], "<!--") || p.noComment {
		return 0
	}
	end := strings.Index(p.s[i+4:], "-->")
	if end < 0 {
		p.noComment = true
		return 0
	}
	return i + 4 + end + 3
}

// autolink is the end of the autolink <scheme:...> at i, or 0; its URL is
// written out.
func (p *inlineParser) autolink(i int) int {
	s := p.s
	j := i + 1
	for j < len(s) && j-i <= 33 && (isAlnum(s[j]) || s[j] == '+' || s[j] == '.' || s[j] == '-') {
		j++
	}
	if j == i+1 || j-(i+1) < 2 || j >= len(s) || s[j] != ':' || !isLetter(s[i+1]) {
		return 0
	}
	for k := j + 1; k < len(s); k++ {
		if !p.spend(1) {
			return 0
		}
		switch s[k] {
		case '>':
			p.out.WriteString(" " + s[i+1:k] + " ")
			return k + 1
		case ' ', '\t', '\n', '<':
			return 0
		}
	}
	return 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool  { return isLetter(c) || c >= '0' && c <= '9' }

// tag reads the HTML or JSX tag at i and returns its end, or 0 when there
// is none there. The text of the attributes readers see is written out.
func (p *inlineParser) tag(i int) int {
	s := p.s
	j := i + 1
	if j < len(s) && s[j] == '/' {
		j++
	}
	if j < len(s) && s[j] == '>' { // a fragment, <> or </>
		return j + 1
	}
	start := j
	if j >= len(s) || !isLetter(s[j]) {
		return 0
	}
	for j < len(s) && (isAlnum(s[j]) || s[j] == '-' || s[j] == '.' || s[j] == ':' || s[j] == '_') {
		j++
	}
	name := s[start:j]
	var kept []string
	for {
		if !p.spend(1) {
			return 0
		}
		for j < len(s) && isSpaceByte(s[j]) {
			j++
		}
		if j >= len(s) {
			return 0
		}
		switch {
		case s[j] == '>':
			p.writeKept(kept)
			return j + 1
		case s[j] == '/' && j+1 < len(s) && s[j+1] == '>':
			p.writeKept(kept)
			return j + 2
		case s[j] == '{': // {...spread}
			n := p.braces(j)
			if n == 0 {
				return 0
			}
			j = n
			continue
		}
		a := j
		for j < len(s) && (isAlnum(s[j]) || strings.IndexByte("_:@.-", s[j]) >= 0) {
			j++
		}
		if j == a {
			return 0
		}
		attr := s[a:j]
		for j < len(s) && isSpaceByte(s[j]) {
			j++
		}
		if j >= len(s) || s[j] != '=' {
			continue // a boolean attribute
		}
		j++
		for j < len(s) && isSpaceByte(s[j]) {
			j++
		}
		if j >= len(s) {
			return 0
		}
		var value string
		switch q := s[j]; q {
		case '"', '\'':
			end := p.until(j+1, q)
			if end < 0 {
				return 0
			}
			value, j = s[j+1:end], end+1
		case '{':
			n := p.braces(j)
			if n == 0 {
				return 0
			}
			value, _ = stringLiteral(strings.TrimSpace(s[j+1 : n-1]))
			j = n
		default:
			a := j
			for j < len(s) && !isSpaceByte(s[j]) && s[j] != '>' && s[j] != '"' && s[j] != '\'' && s[j] != '<' {
				j++
			}
			value = s[a:j]
		}
		if keptAttribute(name, attr) && value != "" {
			kept = append(kept, html.UnescapeString(value))
		}
	}
}

// keptAttribute reports whether the attribute attr of the tag name is
// text readers see: a component's title (Card, Accordion, Tab, Step,
// Expandable, ...), an image's alt text, an Update's label, the name of a
// ResponseField or ParamField.
func keptAttribute(name, attr string) bool {
	switch attr {
	case "title", "alt", "label":
		return true
	case "name":
		return strings.HasSuffix(name, "Field")
	}
	return false
}

func (p *inlineParser) writeKept(kept []string) {
	p.out.WriteByte(' ')
	for _, k := range kept {
		p.out.WriteString(k)
		p.out.WriteByte(' ')
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// until is the position of the next q from i, or -1; it draws on the
// budget.
func (p *inlineParser) until(i int, q byte) int {
	for j := i; j < len(p.s); j++ {
		if !p.spend(1) {
			return -1
		}
		if p.s[j] == q {
			return j
		}
	}
	return -1
}

// braces is the end of the balanced {...} at i (strings and template
// literals skipped), or 0.
func (p *inlineParser) braces(i int) int {
	s := p.s
	depth := 0
	for j := i; j < len(s); j++ {
		if !p.spend(1) {
			return 0
		}
		switch c := s[j]; c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '"', '\'', '`':
			end := p.until(j+1, c)
			if end < 0 {
				return 0
			}
			j = end
		}
	}
	return 0
}

// expression skips the MDX {expression} at i: a comment, or code whose
// value this package cannot know; a string literal alone ({" "}) is
// written out. It returns the end, or 0.
func (p *inlineParser) expression(i int) int {
	n := p.braces(i)
	if n == 0 {
		return 0
	}
	if v, ok := stringLiteral(strings.TrimSpace(p.s[i+1 : n-1])); ok {
		p.out.WriteString(v)
	} else {
		p.out.WriteByte(' ')
	}
	return n
}

// stringLiteral is the text of a JavaScript string literal without
// escapes or substitutions, the whole of s.
func stringLiteral(s string) (string, bool) {
	if len(s) < 2 {
		return "", false
	}
	q := s[0]
	if (q != '"' && q != '\'' && q != '`') || s[len(s)-1] != q {
		return "", false
	}
	inner := s[1 : len(s)-1]
	if strings.IndexByte(inner, q) >= 0 || strings.IndexByte(inner, '\\') >= 0 || q == '`' && strings.Contains(inner, "${") {
		return "", false
	}
	return inner, true
}

// afterBracket is where reading goes on after a ']' whose next byte is at
// i: past a link's (destination) or [reference] label, which are not text.
func (p *inlineParser) afterBracket(i int) int {
	s := p.s
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '(':
		depth := 0
		for j := i; j < len(s); j++ {
			if !p.spend(1) {
				return i
			}
			switch s[j] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return j + 1
				}
			case '\n':
				if j+1 < len(s) && s[j+1] == '\n' {
					return i
				}
			}
		}
	case '[':
		for j := i + 1; j < len(s) && j-i < 1000; j++ {
			if !p.spend(1) {
				return i
			}
			switch s[j] {
			case ']':
				return j + 1
			case '[':
				return i
			}
		}
	}
	p.out.WriteByte(' ')
	return i
}
