package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/pageviews"
)

// readBody reads a request body of at most maxBytes: 413 past it.
func readBody(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, *badRequest) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &badRequest{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", maxBytes)}
	}
	if err != nil {
		return nil, invalidInput("cannot read the request body")
	}
	return body, nil
}

// decodeStrict decodes body, one JSON object, into v: valid UTF-8, no
// unknown field (the message lists fields, v's fields), no wrong type, no
// trailing data. Errors name the field.
func decodeStrict(body []byte, v any, fields []string) *badRequest {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalidInput("request body is empty; send a JSON object with the fields %s", quoteFields(fields))
	}
	if !utf8.Valid(body) {
		return invalidInput("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err, fields)
	}
	if dec.More() {
		return invalidInput("request body has data after the JSON object")
	}
	return nil
}

// textProblem says what makes the value of a text field unfit to store and
// show, or "" if nothing does: more than maxChars characters, a control
// character (tabs and line breaks are allowed when multiline), or an
// invisible character that reorders text (with which a comment or a code
// block can display as something else; see isBidiControl).
func textProblem(field, v string, maxChars int, multiline bool) string {
	if n := utf8.RuneCountInString(v); n > maxChars {
		return fmt.Sprintf("field %q is %d characters long; the limit is %d", field, n, maxChars)
	}
	for _, c := range v {
		switch {
		case multiline && (c == '\t' || c == '\n' || c == '\r'):
		case unicode.IsControl(c):
			return fmt.Sprintf("field %q holds the control character %U", field, c)
		case isBidiControl(c):
			return fmt.Sprintf("field %q holds a bidirectional formatting character (%U)", field, c)
		}
	}
	return ""
}

// sitePath checks and normalises the path of a page of the site, given in
// field, as the page-view middleware does (so feedback and views name a
// page alike); a query or fragment, if sent, is dropped.
func sitePath(field, v string) (string, *badRequest) {
	if i := strings.IndexAny(v, "?#"); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		return "", invalidInput("field %q must not be empty", field)
	}
	if p := pathProblem(v); p != "" {
		return "", invalidInput("field %q %s", field, p)
	}
	return pageviews.NormalizePath(v), nil
}

// readSubmission reads a public submission's body into in (a pointer to a
// body type whose fields are fields), answering the request itself when
// there is nothing to store: a refused body gets its 400 or 413, and a
// filled honeypot (what honeypot returns: a form field hidden from people)
// the same 202 as a stored submission, counted. It reports whether in is
// to be stored.
func (s *Server) readSubmission(w http.ResponseWriter, r *http.Request, in any, fields []string, honeypot func() *string) bool {
	body, bad := readBody(w, r, s.cfg.Site.MaxBodyBytes)
	if bad == nil {
		bad = decodeStrict(body, in, fields)
	}
	if bad != nil {
		writeError(w, bad.Status, bad.Message)
		return false
	}
	if h := honeypot(); h != nil && strings.TrimSpace(*h) != "" {
		s.siteCounters.honeypot.Add(1)
		writeAccepted(w)
		return false
	}
	return true
}
