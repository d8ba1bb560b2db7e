package server

import (
	"context"
	"net/http"
)

type requestIDKey struct{}

// requestID keeps a caller's X-Request-Id when it is a sane token, so a
// request can be followed across a proxy and this server; otherwise it makes
// one. Anything else is replaced, since the id lands in logs and headers.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); len(id) > 0 && len(id) <= 128 && saneToken(id) {
		return id
	}
	return "req_" + randomBase62(20)
}

func saneToken(s string) bool {
	for _, c := range s {
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
