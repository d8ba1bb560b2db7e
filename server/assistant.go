package server

import "net/http"

// noAssistant answers the assistant exports: this server has no assistant,
// so there is nothing to export, and a 200 with empty lists would pass for
// "no conversations".
func (s *Server) noAssistant(w http.ResponseWriter, _ *http.Request, _ caller) {
	writeJSON(w, http.StatusNotFound, analyticsErrorBody{Error: "this server has no assistant, so it has no assistant conversations, threads or caller statistics to export"})
}
