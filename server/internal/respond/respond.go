// Package respond is how every feature of the server answers: JSON bodies
// and errors, the one answer to each error of the store (a 500 names the
// request id and nothing else), and the request id itself.
package respond

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// errorBody is every error's body: {"error": "..."}, which the analytics
// endpoints complete with details (every problem found, so that a client
// fixes them all in one go).
type errorBody struct {
	Error   string             `json:"error"`
	Details []wire.ErrorDetail `json:"details,omitempty"`
}

// JSON answers status with v as JSON.
func JSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Only our own types are written; failing here is a bug, and the
		// client still deserves a well-formed answer.
		status, body = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// Error answers status with {"error": message}.
func Error(w http.ResponseWriter, status int, message string) {
	JSON(w, status, errorBody{Error: message})
}

// ErrorDetails answers status with {"error": message, "details": [...]},
// the analytics endpoints' error that lists every problem found.
func ErrorDetails(w http.ResponseWriter, status int, message string, details []wire.ErrorDetail) {
	JSON(w, status, errorBody{Error: message, Details: details})
}

// Quote quotes s, something a client sent, for a message: cut to 100 bytes
// and made valid UTF-8.
func Quote(s string) string {
	const max = 100
	if len(s) > max {
		s = s[:max] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
