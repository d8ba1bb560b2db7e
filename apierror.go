package docsapi

import (
	"encoding/json"
	"html"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/internal/retry"
)

// newAPIError builds the error for a non-2xx response. It accepts the two
// documented bodies ({"error"} and {"error","details"}) and copes with what
// proxies and gateways send instead: other JSON shapes, HTML, plain text, or
// nothing at all.
func newAPIError(method, path string, resp *http.Response, body []byte, now time.Time) (*APIError, bool) {
	e := &APIError{
		StatusCode: resp.StatusCode,
		Method:     method,
		Path:       path,
		RequestID:  requestID(resp.Header),
		Body:       string(body[:min(len(body), maxErrorBodyBytes)]),
	}
	retryAfter, hasRetryAfter := retry.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
	e.RetryAfter = retryAfter
	if !parseErrorJSON(e, body) {
		e.Message = describeNonJSON(resp.Header.Get("Content-Type"), body)
	}
	return e, hasRetryAfter
}

// parseErrorJSON fills Message and Details from a JSON error body. Besides
// the documented {"error": "..."}, it reads {"error": {"message": "..."}} and
// {"message": "..."}, and details given as objects or plain strings.
func parseErrorJSON(e *APIError, body []byte) bool {
	var wire struct {
		Error   json.RawMessage   `json:"error"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return false
	}
	e.Message = textOf(wire.Error)
	if e.Message == "" {
		e.Message = wire.Message
	}
	for _, raw := range wire.Details {
		if msg := textOf(raw); msg != "" {
			e.Details = append(e.Details, ErrorDetail{Message: msg})
		}
	}
	return true
}

// textOf returns a JSON string, or the "message" of a JSON object.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Message
	}
	return ""
}

var htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// describeNonJSON makes a short message from a body that is not JSON: the
// title of an HTML page, or the start of a text body.
func describeNonJSON(contentType string, body []byte) string {
	if len(body) == 0 {
		return ""
	}
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType == "" {
		mediaType = "unknown"
	}
	text := string(body)
	if m := htmlTitle.FindStringSubmatch(text); m != nil {
		text = html.UnescapeString(m[1])
	}
	text = strings.Join(strings.Fields(text), " ")
	const maxLen = 200
	if len(text) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return "non-JSON " + mediaType + " response: " + text
}
