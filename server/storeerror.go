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
	var invalid *store.InvalidError
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, subject+" not found")
	case errors.Is(err, store.ErrArchived):
		writeError(w, http.StatusBadRequest, subject+" is archived and takes no more messages")
	case errors.Is(err, store.ErrIdempotencyMismatch):
		writeError(w, http.StatusConflict, "this Idempotency-Key was already used with a different request; use a new key for a new request")
	case errors.As(err, &invalid):
		writeError(w, http.StatusBadRequest, "invalid request: "+invalid.Problem)
	default:
		s.internalError(w, r, doing, err)
	}
}

// internalError logs err with the request id and answers 500 without
// details: they may hold paths, SQL or secrets.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, doing string, err error) {
	id := requestIDFrom(r.Context())
	s.cfg.Logger.ErrorContext(r.Context(), "server: "+doing, slog.String("request_id", id), slog.Any("error", err))
	writeError(w, http.StatusInternalServerError, "internal error (request id "+id+")")
}
