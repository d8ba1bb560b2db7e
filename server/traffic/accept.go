package traffic

import "strings"

// acceptHeader is an Accept header as one string (Classify) or as the
// request's header lines (ClassifyRequest), so that neither caller has to
// join or copy anything.
type acceptHeader struct {
	one  string
	many []string
}

// prefersMarkdown reports whether the header prefers Markdown to HTML:
// text/markdown (or its older name text/x-markdown) is listed with a
// q-value above zero, and text/html is absent or listed with a q-value no
// higher. A tie goes to Markdown because browsers never list Markdown at
// all: a client that names it at HTML's weight is a Markdown-aware tool.
// Wildcards ("*/*", "text/*") are ignored: they accept anything and prefer
// nothing. An element whose q-value is malformed is ignored, as RFC 9110
// leaves such an element without meaning.
func (a acceptHeader) prefersMarkdown() bool {
	// Browsers send long Accept headers that never mention Markdown; a
	// vectorised byte search rules them out before any parsing.
	mentioned := mentionsMarkdown(a.one)
	for _, v := range a.many {
		mentioned = mentioned || mentionsMarkdown(v)
	}
	if !mentioned {
		return false
	}
	md, html := -1, -1
	scanAccept(a.one, &md, &html)
	for _, v := range a.many {
		scanAccept(v, &md, &html)
	}
	return md > 0 && md >= html
}

// mentionsMarkdown reports whether s contains "markdown" in any case. It
// looks for the 'k' (either case), which browser Accept headers do not
// contain, with strings.IndexByte, and checks the letters around it.
func mentionsMarkdown(s string) bool {
	const word, k = "markdown", len("mar") // offset of the 'k' in word
	for _, kb := range [2]byte{'k', 'K'} {
		for from := 0; ; {
			i := strings.IndexByte(s[from:], kb)
			if i < 0 {
				break
			}
			i += from
			if i >= k && i-k+len(word) <= len(s) && equalFoldLower(s[i-k:i-k+len(word)], word) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// scanAccept raises *md and *html to the highest q-value (in thousandths)
// that the header gives Markdown and HTML.
func scanAccept(header string, md, html *int) {
	for header != "" {
		var elem string
		elem, header, _ = strings.Cut(header, ",")
		mediaType, params, _ := strings.Cut(elem, ";")
		mediaType = trimOWS(mediaType)
		var target *int
		switch {
		case equalFoldLower(mediaType, "text/markdown"), equalFoldLower(mediaType, "text/x-markdown"):
			target = md
		case equalFoldLower(mediaType, "text/html"):
			target = html
		default:
			continue
		}
		q, ok := qValue(params)
		if ok && q > *target {
			*target = q
		}
	}
}

// qValue finds the q parameter among an element's parameters and returns
// it in thousandths: 1000 when there is none, ok false when it is not a
// valid qvalue ("0", "0.5", "1", "1.000", at most three decimals).
func qValue(params string) (int, bool) {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		p = trimOWS(p)
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
			continue
		}
		return parseQ(p[2:])
	}
	return 1000, true
}

// parseQ parses an RFC 9110 qvalue into thousandths.
func parseQ(s string) (int, bool) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	q := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return q, true
	}
	if s[1] != '.' || len(s) > 5 {
		return 0, false
	}
	scale := 100
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		q += int(s[i]-'0') * scale
		scale /= 10
	}
	if q > 1000 {
		return 0, false
	}
	return q, true
}

// trimOWS removes the optional white space (spaces and tabs) HTTP allows
// around list elements and parameters.
func trimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
