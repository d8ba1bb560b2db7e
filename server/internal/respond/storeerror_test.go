package respond

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/store"
)

func TestStoreErrorAnswersEachKindOneWay(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for _, tc := range []struct {
		err     error
		status  int
		message string
	}{
		{fmt.Errorf("sqlite: job: %w", store.ErrNotFound), http.StatusNotFound, `job "j" not found`},
		{fmt.Errorf("sqlite: add prompt: %w", store.ErrArchived), http.StatusBadRequest, `job "j" is archived and takes no more messages`},
		{fmt.Errorf("sqlite: add prompt: %w", store.ErrIdempotencyMismatch), http.StatusConflict,
			"this Idempotency-Key was already used with a different request; use a new key for a new request"},
		{fmt.Errorf("postgres: add prompt: %w", store.Invalid("job %q: empty prompt", "j")), http.StatusBadRequest,
			`invalid request: job "j": empty prompt`},
		{errors.New("postgres: job: connection refused at 10.0.0.7"), http.StatusInternalServerError, "internal error (request id req_1)"},
		{fmt.Errorf("postgres: job: %w", store.ErrClosed), http.StatusInternalServerError, "internal error (request id req_1)"},
	} {
		logs.Reset()
		r := httptest.NewRequestWithContext(WithRequestID(t.Context(), "req_1"), http.MethodGet, "/", nil)
		w := httptest.NewRecorder()
		StoreError(w, r, log, tc.err, `job "j"`, "loading job")
		var body errorBody
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%v: body %q: %v", tc.err, w.Body, err)
		}
		if w.Code != tc.status || body.Error != tc.message {
			t.Errorf("%v: answered %d %q, want %d %q", tc.err, w.Code, body.Error, tc.status, tc.message)
		}
		logged := logs.String()
		if tc.status == http.StatusInternalServerError {
			if !strings.Contains(logged, "request_id=req_1") || !strings.Contains(logged, "loading job") {
				t.Errorf("%v: logged %q, want the request id and what it was doing", tc.err, logged)
			}
		} else if logged != "" {
			t.Errorf("%v: logged %q for an answer the client caused", tc.err, logged)
		}
	}
}
