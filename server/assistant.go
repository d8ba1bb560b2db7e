package server

import (
	"net/http"

	"github.com/docsapi/docsapi-go/server/internal/keyauth"
	"github.com/docsapi/docsapi-go/server/internal/respond"
)

// noAssistant answers the assistant exports: this server has no assistant,
// so there is nothing to export, and a 200 with empty lists would pass for
// "no conversations".
func (s *Server) noAssistant(w http.ResponseWriter, _ *http.Request, _ keyauth.Caller) {
	respond.Error(w, http.StatusNotFound, "this server has no assistant, so it has no assistant conversations, threads or caller statistics to export")
}
