package connlimit

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
)

// Install hooks l into srv, whose listener must be one of l's (Listener):
// its handler is wrapped to mark each connection in a request while the
// handler runs and to bound public requests, and its ConnContext and
// ConnState (any already set still run) to find the connection of a
// request and follow net/http's word on when a connection serves requests
// (see conn). Call it before srv serves.
func (l *Limiter) Install(srv *http.Server) {
	h := srv.Handler
	if h == nil {
		h = http.DefaultServeMux
	}
	srv.Handler = l.handler(h)
	prevContext := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, nc net.Conn) context.Context {
		if prevContext != nil {
			ctx = prevContext(ctx, nc)
		}
		if c := unwrap(nc); c != nil {
			ctx = context.WithValue(ctx, connKey{}, c)
		}
		return ctx
	}
	prevState := srv.ConnState
	srv.ConnState = func(nc net.Conn, s http.ConnState) {
		if s == http.StateActive || s == http.StateIdle {
			if c := unwrap(nc); c != nil {
				l.connState(c, s == http.StateActive)
			}
		}
		if prevState != nil {
			prevState(nc, s)
		}
	}
}

// connKey is the context key of a request's *conn.
type connKey struct{}

// unwrap finds the *conn under nc: itself, or the connection a TLS
// connection runs on.
func unwrap(nc net.Conn) *conn {
	for nc != nil {
		switch v := nc.(type) {
		case *conn:
			return v
		case interface{ NetConn() net.Conn }:
			nc = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// handler wraps h: the request's connection is in a request while h runs,
// and a public request is bounded.
func (l *Limiter) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*conn)
		if c != nil {
			body := watchBody(r)
			l.beginRequest(c)
			defer func() { l.endRequest(c, r.ProtoMajor == 1 && answerCloses(w, r) && body.left()) }()
		}
		if l.cfg.Public != nil && l.cfg.Public(r) {
			if !l.takePublic() {
				l.refusePublic(w, r, c)
				return
			}
			defer l.releasePublic()
			// An error means the writer cannot set deadlines (a test's
			// recorder); the server's read timeout still applies.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(l.cfg.PublicBodyTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

// bodyWatch follows whether a handler read its request's body to the end.
// After an answer that closes the connection, net/http reads again only to
// drain a body left unread, once the answer is written: that read is what
// makes the connection closing (conn.Read). A connection whose body was
// read, or had none, is not marked so: net/http's read of it in the
// background may come late, after the handler but before the answer is
// flushed, and a newcomer taking its place then would cut the answer.
type bodyWatch struct {
	io.ReadCloser
	done atomic.Bool
}

// watchBody puts a bodyWatch in place of r's body, or returns nil for a
// request without one.
func watchBody(r *http.Request) *bodyWatch {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil
	}
	b := &bodyWatch{ReadCloser: r.Body}
	r.Body = b
	return b
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done.Store(true)
	}
	return n, err
}

// left reports whether the request had a body its handler did not read to
// the end.
func (b *bodyWatch) left() bool { return b != nil && !b.done.Load() }

// answerCloses reports whether the connection closes after this answer,
// as the handler or the client said.
func answerCloses(w http.ResponseWriter, r *http.Request) bool {
	if r.Close {
		return true
	}
	for _, v := range w.Header().Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "close") {
				return true
			}
		}
	}
	return false
}

func (l *Limiter) takePublic() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.public >= l.cfg.MaxPublic {
		return false
	}
	l.public++
	return true
}

func (l *Limiter) releasePublic() {
	l.mu.Lock()
	l.public--
	l.mu.Unlock()
}

// busyBody is the answer of a public request refused: the API's error
// shape, {"error": "..."}.
var busyBody, _ = json.Marshal(map[string]string{"error": "the server is busy with public requests; retry later"})

// refusePublic answers 503 without reading the body, and closes the
// connection (an HTTP/2 one once its other streams are done): a client
// refused should not keep the slot by sending more.
func (l *Limiter) refusePublic(w http.ResponseWriter, r *http.Request, c *conn) {
	h := w.Header()
	h.Set("X-Request-Id", requestID(r))
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Retry-After", "1")
	h.Set("Connection", "close")
	// The rest of the body, if any, may arrive for a moment, so that
	// closing does not reset the connection before the client reads the
	// answer; not longer.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedGrace))
	peer := netip.Addr{}
	if c != nil {
		peer = c.peer
	} else if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		peer = ap.Addr().Unmap()
	}
	l.log.refused(PublicBusy, peer) // counted before the client can see it
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write(append(busyBody, '\n'))
}

// requestID is the X-Request-Id of a refusal, by the server's rule
// (respond.RequestID in server/internal/respond), since the API promises
// one on every answer: the caller's when it is a sane token, else a new
// one.
func requestID(r *http.Request) string {
	id := r.Header.Get("X-Request-Id")
	sane := len(id) > 0 && len(id) <= 128
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)) {
			sane = false
			break
		}
	}
	if sane {
		return id
	}
	return "req_" + rand.Text()
}
