package server

import (
	"io"
	"net/http"
	"time"
)

// unreadBodyGrace is how long the rest of a request body the server will
// not read may keep arriving once the answer is sent. A client that sent its
// body at once has sent it by then, and its connection closes cleanly; a
// client trickling a body to hold the connection loses it after this long
// rather than after the server's read timeout.
const unreadBodyGrace = time.Second

// closeUnreadBodies makes an HTTP/1.x connection close, rather than read on,
// when its request is answered before its body was read to the end: a
// refusal (401, 403, 404, 413, 429, an unknown route) or any answer of a
// handler that left the body unread.
//
// net/http, to reuse a connection, reads up to 256 KiB of an unread body at
// whatever pace the client sends it: before writing the answer when the rest
// is smaller than that, after it otherwise, until the server's read timeout.
// Connection: close stops the first read but not the second (the body is
// still drained when the handler returns, see response.finishRequest and
// body.Close in net/http), so the connection's read deadline is also cut to
// unreadBodyGrace. HTTP/2 resets the stream of an unread body instead, and
// is left alone.
//
// The deadline is set through http.ResponseController: middleware between
// the server and this handler must implement Unwrap for it to take effect;
// without it, only Connection: close is sent.
func closeUnreadBodies(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if r.ProtoMajor != 1 || r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return w, r
	}
	body := &watchedBody{ReadCloser: r.Body}
	r = r.WithContext(r.Context()) // a shallow copy, whose Body is ours to set
	r.Body = body
	return &unreadGuard{ResponseWriter: w, body: body}, r
}

// watchedBody remembers whether the handler read the body to its end.
type watchedBody struct {
	io.ReadCloser
	eof bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// unreadGuard decides, when the answer's header is written, whether the
// connection must close.
type unreadGuard struct {
	http.ResponseWriter
	body    *watchedBody
	decided bool
}

func (g *unreadGuard) WriteHeader(code int) {
	if !g.decided && code >= 200 {
		g.decided = true
		if !g.body.eof {
			g.Header().Set("Connection", "close")
			// An error means the writer cannot set deadlines (a
			// recorder in tests, a wrapper without Unwrap): nothing
			// more can be done from here.
			_ = http.NewResponseController(g.ResponseWriter).SetReadDeadline(time.Now().Add(unreadBodyGrace))
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *unreadGuard) Write(b []byte) (int, error) {
	if !g.decided {
		g.WriteHeader(http.StatusOK)
	}
	return g.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *unreadGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }
