package server

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/docsapi/docsapi-go/server/store"
)

// storeError answers err, an error of the store, the one way the API
// answers each kind: about subject, what the request names (`job "j"`),
//
//   - store.ErrNotFound: 404, subject not found;
//   - store.ErrArchived: 400, subject takes no more messages (only a
//     follow-up can meet it);
//   - store.ErrIdempotencyMismatch: 409, the key is for another request;
//   - store.ErrInvalid: 400, with what the store found wrong, which is
//     about the request alone;
//   - anything else: 500 with the request id and no details, which may
//     hold paths, SQL or secrets; the error is logged with the id and
//     doing, what the request was doing.
func (s *Server) storeError(w http.ResponseWriter, r *http.Request, err error, subject, doing string) {
	status, msg := s.storeAnswer(r, err, subject, doing)
	writeError(w, status, msg)
}

// storeAnswer is storeError's status and message, for answers that are
// not JSON (the dashboard's pages); it logs as storeError does.
func (s *Server) storeAnswer(r *http.Request, err error, subject, doing string) (int, string) {
	var invalid *store.InvalidError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, subject + " not found"
	case errors.Is(err, store.ErrArchived):
		return http.StatusBadRequest, subject + " is archived and takes no more messages"
	case errors.Is(err, store.ErrIdempotencyMismatch):
		return http.StatusConflict, "this Idempotency-Key was already used with a different request; use a new key for a new request"
	case errors.As(err, &invalid):
		return http.StatusBadRequest, "invalid request: " + invalid.Problem
	}
	return http.StatusInternalServerError, s.logInternalError(r, doing, err)
}

// internalError logs err with the request id and answers 500 without
// details: they may hold paths, SQL or secrets.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, doing string, err error) {
	writeError(w, http.StatusInternalServerError, s.logInternalError(r, doing, err))
}

// logInternalError logs err with the request id and returns the message
// of its 500, which names the id and nothing else.
func (s *Server) logInternalError(r *http.Request, doing string, err error) string {
	id := requestIDFrom(r.Context())
	s.cfg.Logger.ErrorContext(r.Context(), "server: "+doing, slog.String("request_id", id), slog.Any("error", err))
	return "internal error (request id " + id + ")"
}
