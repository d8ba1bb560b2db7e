package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/internal/backoff"
	"github.com/docsapi/docsapi-go/internal/retry"
	"github.com/docsapi/docsapi-go/server/engine"
)

// Bounds on what is read from a provider: answers are a few kilobytes to a
// few hundred, so anything larger is a fault, not something to buffer.
const (
	maxAnswerBytes = 16 << 20
	maxErrorBytes  = 64 << 10
	maxMessageLen  = 500
)

// APIError is an answer of the provider with an error status.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Type is the provider's error type or code, when it sent one.
	Type string
	// Message is the provider's message, cut to a few hundred characters,
	// with the API key redacted.
	Message string
	// RetryAfter is the wait the provider asked for, if any.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the model provider answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Type != "" {
		b.WriteString(": " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// post sends one JSON request, retrying what may heal, and decodes the
// answer into out. Errors that cannot heal are engine.Permanent.
func (a *Agent) post(ctx context.Context, path string, header http.Header, body any, out any, log *slog.Logger) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("llm agent: encoding the request: %w", err)
	}
	return a.withRetries(ctx, "llm agent", log, func() (int, time.Duration, bool, error) {
		return a.attempt(ctx, path, header, payload, out)
	})
}

// withRetries calls try until it succeeds, retrying what may heal: rate
// limits, 408 and 5xx answers and network errors, at most MaxRetries times,
// after a backoff or the Retry-After the provider sent. try returns the
// status (0 when no answer arrived) and the Retry-After of its attempt.
// Errors that cannot heal are engine.Permanent; prefix starts every error.
func (a *Agent) withRetries(ctx context.Context, prefix string, log *slog.Logger, try func() (int, time.Duration, bool, error)) error {
	for attempt := 1; ; attempt++ {
		start := time.Now()
		status, retryAfter, hasRetryAfter, err := try()
		log.Debug(prefix+": request", slog.Int("attempt", attempt), slog.Int("status", status), slog.Duration("duration", time.Since(start)))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", prefix, context.Cause(ctx))
		}
		var decodeErr *decodeError
		switch {
		case errors.As(err, &decodeErr):
			// A garbled answer to a valid request: not retried here, as it
			// is most likely the server's doing, but the job may try again.
			return fmt.Errorf("%s: %w", prefix, err)
		case !retry.Decide(retry.Replayable, status, transportErr(status, err)):
			return engine.Permanent(fmt.Errorf("%s: %w", prefix, err))
		case attempt > a.cfg.MaxRetries:
			return fmt.Errorf("%s: giving up after %d attempts: %w", prefix, attempt, err)
		}
		delay := backoff.Exponential(attempt, a.cfg.RetryDelay, a.cfg.MaxRetryDelay, rand.Float64())
		if hasRetryAfter {
			if retryAfter > a.cfg.MaxRetryDelay {
				// Waiting that long would hold a worker; the engine's own
				// retry of the job comes later anyway.
				return fmt.Errorf("%s: the provider asked to wait %s: %w", prefix, retryAfter, err)
			}
			delay = retryAfter
		}
		log.Warn(prefix+": request failed; retrying", slog.Int("attempt", attempt), slog.Int("status", status),
			slog.Duration("delay", delay), slog.String("error", a.redact(err.Error())))
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", prefix, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// transportErr returns err when no HTTP answer arrived, which is how
// retry.Decide tells a network error from a status.
func transportErr(status int, err error) error {
	if status != 0 {
		return nil
	}
	return err
}

type decodeError struct{ err error }

func (e *decodeError) Error() string { return "reading the provider's answer: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// attempt sends the request once. It returns the status (0 when no answer
// arrived) and the Retry-After the provider sent.
func (a *Agent) attempt(ctx context.Context, path string, header http.Header, payload []byte, out any) (int, time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(payload))
	if err != nil {
		return 0, 0, false, err
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, 0, false, err
	}
	defer resp.Body.Close()
	retryAfter, hasRetryAfter := parseRetryAfter(resp.Header)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		apiErr := a.apiError(resp.StatusCode, data)
		apiErr.RetryAfter = retryAfter
		return resp.StatusCode, retryAfter, hasRetryAfter, apiErr
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		// The answer broke off: a network error, worth a retry.
		return 0, 0, false, err
	}
	if len(data) > maxAnswerBytes {
		return resp.StatusCode, 0, false, &decodeError{fmt.Errorf("the answer is over %d bytes", maxAnswerBytes)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, 0, false, &decodeError{err}
	}
	return resp.StatusCode, 0, false, nil
}

// parseRetryAfter reads Retry-After, or the retry-after-ms header some
// OpenAI-compatible servers send instead.
func parseRetryAfter(h http.Header) (time.Duration, bool) {
	if d, ok := retry.ParseRetryAfter(h.Get("Retry-After"), time.Now()); ok {
		return d, true
	}
	var ms float64
	if v := h.Get("Retry-After-Ms"); v != "" {
		if _, err := fmt.Sscanf(v, "%g", &ms); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	return 0, false
}

// apiError reads an error answer. Both providers nest the message under
// "error": OpenAI as {"error": {"message", "type", "code"}}, Anthropic as
// {"type": "error", "error": {"type", "message"}}; a proxy may send
// anything, so a body that is not JSON is quoted as text.
func (a *Agent) apiError(status int, body []byte) *APIError {
	var parsed struct {
		Error json.RawMessage `json:"error"`
	}
	var detail struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	e := &APIError{StatusCode: status}
	if json.Unmarshal(body, &parsed) == nil && len(parsed.Error) > 0 {
		if json.Unmarshal(parsed.Error, &detail) == nil {
			e.Message, e.Type = detail.Message, detail.Type
			if code, ok := detail.Code.(string); ok && code != "" {
				e.Type = code
			}
		} else {
			var s string
			if json.Unmarshal(parsed.Error, &s) == nil {
				e.Message = s
			}
		}
	} else {
		e.Message = strings.TrimSpace(string(body))
	}
	e.Message = cut(a.redact(e.Message), maxMessageLen)
	e.Type = cut(a.redact(e.Type), 100)
	return e
}

// redact hides the API key in s.
func (a *Agent) redact(s string) string {
	if a.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, a.cfg.APIKey, "[redacted]")
}

// cut shortens s to at most n runes.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
