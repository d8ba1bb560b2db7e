package docs

import (
	"strconv"
	"strings"
	"unicode"
)

// Anchor is the id the docs platform gives a heading with the text text
// (already without markup), before duplicates are told apart. Its rules
// (the platform's documentation, "Automatic anchor IDs"): letters are
// lowercased, each white space becomes a hyphen, a straight apostrophe
// becomes a right single quotation mark (kept), a period becomes a hyphen,
// slashes, ampersands, hyphens and underscores are kept; the rest of the
// punctuation and symbols (parentheses, question marks, colons, emoji) is
// dropped. Letters and digits of every script are kept as they are: the
// platform does not transliterate them.
func Anchor(text string) string {
	text = strings.TrimSpace(text)
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case unicode.IsSpace(r), r == '.':
			b.WriteByte('-')
		case r == '\'' || r == '’':
			b.WriteRune('’')
		case r == '/', r == '&', r == '-', r == '_':
			b.WriteRune(r)
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.Is(unicode.Mn, r):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// anchors hands out a page's anchors, unique on the page: the platform
// adds -2, -3, and so on to a heading whose id an earlier heading of the
// page already has, counting across the whole page.
type anchors struct {
	used map[string]bool
	next map[string]int
}

// unique returns id, or id with the first free counter after it.
func (a *anchors) unique(id string) string {
	if a.used == nil {
		a.used, a.next = map[string]bool{}, map[string]int{}
	}
	if !a.used[id] {
		a.used[id] = true
		return id
	}
	n := max(a.next[id], 2)
	for a.used[id+"-"+strconv.Itoa(n)] {
		n++
	}
	a.next[id] = n + 1
	out := id + "-" + strconv.Itoa(n)
	a.used[out] = true
	return out
}

// customID splits a heading's trailing "{#custom-id}" from its text: the
// platform's way to fix a heading's anchor. ok is false when there is none.
func customID(text string) (rest, id string, ok bool) {
	t := strings.TrimRight(text, " \t")
	if !strings.HasSuffix(t, "}") {
		return text, "", false
	}
	open := strings.LastIndex(t, "{#")
	if open < 0 {
		return text, "", false
	}
	id = t[open+2 : len(t)-1]
	if id == "" || strings.ContainsAny(id, " \t{}") {
		return text, "", false
	}
	return strings.TrimRight(t[:open], " \t"), id, true
}
