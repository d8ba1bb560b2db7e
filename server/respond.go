package server

import (
	"encoding/json"
	"net/http"

	"github.com/docsapi/docsapi-go/server/internal/wire"
)

// errorBody is the agent endpoints' error: {"error": "..."}.
type errorBody struct {
	Error string `json:"error"`
}

// analyticsErrorBody is the analytics endpoints' error, whose details list
// every problem found, so a client fixes them all in one go.
type analyticsErrorBody struct {
	Error   string             `json:"error"`
	Details []wire.ErrorDetail `json:"details,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
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

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, errorBody{Error: message})
}
