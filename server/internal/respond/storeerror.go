package respond

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/docsapi/docsapi-go/server/store"
)

// StoreError answers err, an error of the store, the one way the server
// answers each kind: about subject, what the request names (`job "j"`),
//
//   - store.ErrNotFound: 404, subject not found;
//   - store.ErrArchived: 400, subject takes no more messages (only a
//     follow-up can meet it);
//   - store.ErrIdempotencyMismatch: 409, the key is for another request;
//   - store.ErrInvalid: 400, with what the store found wrong, which is
//     about the request alone;
//   - anything else: 500 with the request id and no details, which may
//     hold paths, SQL or secrets; the error is logged to log with the id
//     and doing, what the request was doing.
func StoreError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, subject, doing string) {
	status, msg := StoreAnswer(r, log, err, subject, doing)
	Error(w, status, msg)
}

// StoreAnswer is StoreError's status and message, for answers that are
// not JSON (the dashboard's pages); it logs as StoreError does.
func StoreAnswer(r *http.Request, log *slog.Logger, err error, subject, doing string) (int, string) {
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
	return http.StatusInternalServerError, LogInternal(r, log, doing, err)
}

// InternalError logs err, an error the client did not cause, with the
// request id and answers 500 without details: they may hold paths, SQL or
// secrets.
func InternalError(w http.ResponseWriter, r *http.Request, log *slog.Logger, doing string, err error) {
	Error(w, http.StatusInternalServerError, LogInternal(r, log, doing, err))
}

// LogInternal logs err, an error the client did not cause, with the
// request id, and returns the message of its 500, which names the id and
// nothing else.
func LogInternal(r *http.Request, log *slog.Logger, doing string, err error) string {
	id := RequestIDFrom(r.Context())
	log.ErrorContext(r.Context(), "server: "+doing, slog.String("request_id", id), slog.Any("error", err))
	return InternalMessage(id)
}

// InternalMessage is the message of a 500 of the request id.
func InternalMessage(id string) string {
	return "internal error (request id " + id + ")"
}
