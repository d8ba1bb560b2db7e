package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxTunnels bounds the connections one run's proxy serves at once; more
// wait until one ends. An agent needs a handful; the bound keeps a runaway
// one from spending the server's descriptors.
const maxTunnels = 32

// Timeouts of the proxy: for a client to send its request, and for the
// allowed host to answer the connection.
const (
	requestTimeout = 10 * time.Second
	dialTimeout    = 10 * time.Second
	replyTimeout   = 5 * time.Second
)

// proxy is one run's HTTP proxy: it opens CONNECT tunnels to the allowed
// hosts, and nothing else. It listens on a Unix socket that only the run's
// sandbox sees.
type proxy struct {
	l     net.Listener
	allow *allowlist
	log   *slog.Logger
	jobID string
	slots chan struct{} // one per connection being served

	ctx    context.Context // ends when the proxy closes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // open connections, both sides of tunnels
	closed bool
	full   bool // the limit was logged
}

// listenProxy starts a proxy on a new Unix socket at path.
func listenProxy(path string, allow *allowlist, limit int, log *slog.Logger, jobID string) (*proxy, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("sandbox: starting the proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proxy{l: l, allow: allow, log: log, jobID: jobID, slots: make(chan struct{}, limit),
		ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Close stops the proxy: it closes the listener (removing the socket file)
// and every connection, and waits for its goroutines to end.
func (p *proxy) Close() error {
	p.cancel()
	err := p.l.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		select {
		case p.slots <- struct{}{}:
		default:
			p.noteFull()
			select {
			case p.slots <- struct{}{}:
			case <-p.ctx.Done():
				return
			}
		}
		c, err := p.l.Accept()
		if err != nil {
			<-p.slots
			if p.ctx.Err() != nil {
				return
			}
			// Out of descriptors, most likely: wait rather than spin, and
			// keep serving.
			p.log.Warn("sandbox proxy: accepting a connection", slog.String("job_id", p.jobID), slog.Any("error", err))
			select {
			case <-time.After(100 * time.Millisecond):
			case <-p.ctx.Done():
				return
			}
			continue
		}
		if !p.track(c) {
			c.Close()
			<-p.slots
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-p.slots }()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

// noteFull logs, once per run, that connections wait for a free slot.
func (p *proxy) noteFull() {
	p.mu.Lock()
	first := !p.full
	p.full = true
	p.mu.Unlock()
	if first {
		p.log.Warn("sandbox proxy: the run holds the most tunnels allowed; new connections wait",
			slog.String("job_id", p.jobID), slog.Int("limit", cap(p.slots)))
	}
}

// track records an open connection so that Close can close it; it reports
// false once the proxy is closed.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// handle serves one connection: one CONNECT request, then the tunnel.
func (p *proxy) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(requestTimeout))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		reply(c, http.StatusBadRequest, "docsapi sandbox proxy: malformed request\n")
		return
	}
	if req.Method != http.MethodConnect {
		p.log.Warn("sandbox proxy: refused a request that is not CONNECT", slog.String("job_id", p.jobID),
			slog.String("method", req.Method), slog.String("target", req.RequestURI))
		reply(c, http.StatusMethodNotAllowed, "docsapi sandbox proxy: only CONNECT tunnels (HTTPS) are allowed\n")
		return
	}
	target := req.RequestURI
	addr, ok := p.allow.match(target)
	if !ok {
		p.log.Warn("sandbox proxy: refused a host not in AllowHosts", slog.String("job_id", p.jobID), slog.String("target", target))
		reply(c, http.StatusForbidden, fmt.Sprintf("docsapi sandbox proxy: %q is not among the allowed hosts\n", target))
		return
	}
	d := net.Dialer{Timeout: dialTimeout}
	up, err := d.DialContext(p.ctx, "tcp", addr)
	if err != nil {
		p.log.Warn("sandbox proxy: cannot reach an allowed host", slog.String("job_id", p.jobID),
			slog.String("target", addr), slog.Any("error", err))
		reply(c, http.StatusBadGateway, fmt.Sprintf("docsapi sandbox proxy: cannot reach %s\n", addr))
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	p.log.Debug("sandbox proxy: tunnel", slog.String("job_id", p.jobID), slog.String("target", addr))
	_ = c.SetReadDeadline(time.Time{})
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	_ = c.SetWriteDeadline(time.Time{})
	// br may already hold what the client sent after its request (a TLS
	// hello): it is read through br.
	splice(c, br, up)
}

// reply writes a response with a short text and no keep-alive.
func reply(c net.Conn, code int, text string) {
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(text), text)
}
