package respond

import (
	"context"
	"net/http"

	"github.com/docsapi/docsapi-go/server/internal/base62"
)

type requestIDKey struct{}

// RequestID is the id of r: its caller's X-Request-Id when that is a sane
// token, so a request can be followed across a proxy and this server, or
// else a new one. Anything else is replaced, since the id lands in logs and
// headers.
func RequestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); len(id) > 0 && len(id) <= 128 && saneToken(id) {
		return id
	}
	return "req_" + base62.Random(20)
}

func saneToken(s string) bool {
	for _, c := range s {
		if !base62.Is(c) && c != '-' && c != '_' && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom is the request id ctx carries, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
