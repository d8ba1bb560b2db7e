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
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// maxTunnels bounds the connections one run's proxy serves at once; more
// wait until one ends. An agent needs a handful; the bound keeps a runaway
// one from spending the server's descriptors.
const maxTunnels = 32

// Timeouts of the proxy: for a client to send its request, and for the
// allowed host's name to resolve and the host to answer the connection.
const (
	requestTimeout = 10 * time.Second
	dialTimeout    = 10 * time.Second
	replyTimeout   = 5 * time.Second
)

// minAttemptTimeout is the least time one address of several gets to
// answer, as net.Dialer gives each: the first ones must not take all the
// time when they do not answer.
const minAttemptTimeout = 2 * time.Second

// resolver looks host names up; *net.Resolver is one.
type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// proxy is one run's HTTP proxy: it opens CONNECT tunnels to the allowed
// hosts, and nothing else. It listens on a Unix socket that only the run's
// sandbox sees. It resolves an allowed name itself and dials only the
// addresses its address policy lets it, each as the address it checked.
type proxy struct {
	l     net.Listener
	allow *allowlist
	log   *slog.Logger
	jobID string
	slots chan struct{} // one per connection being served

	resolve resolver
	// dial opens a TCP connection to address, an IP address and a port;
	// default dialAddress.
	dial func(ctx context.Context, address string) (net.Conn, error)

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
	p, err := newProxy(path, allow, limit, log, jobID)
	if err != nil {
		return nil, err
	}
	p.start()
	return p, nil
}

// newProxy returns a proxy listening on a new Unix socket at path, which
// serves nothing until start.
func newProxy(path string, allow *allowlist, limit int, log *slog.Logger, jobID string) (*proxy, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("sandbox: starting the proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proxy{l: l, allow: allow, log: log, jobID: jobID, slots: make(chan struct{}, limit),
		resolve: net.DefaultResolver, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	p.dial = func(ctx context.Context, address string) (net.Conn, error) {
		return dialAddress(ctx, address, p.allow.addrs)
	}
	return p, nil
}

// start serves connections until Close.
func (p *proxy) start() {
	p.wg.Add(1)
	go p.serve()
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
	up, err := p.connect(addr)
	if errors.Is(err, errRefusedAddress) {
		p.log.Warn("sandbox proxy: refused an allowed host's address", slog.String("job_id", p.jobID),
			slog.String("target", addr), slog.Any("error", err))
		reply(c, http.StatusForbidden, fmt.Sprintf("docsapi sandbox proxy: %s leads to an address the proxy refuses (%v)\n", addr, err))
		return
	}
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

// connect opens a connection to addr, an allowed "host:port": to the
// address itself, or to the first that answers of the addresses its name
// resolves to that the address policy lets the proxy dial. Each address is
// dialed as the very address that was checked, never by name again, so a
// DNS answer that changes in between (rebinding) changes nothing. If every
// address is refused, the error wraps errRefusedAddress.
func (p *proxy) connect(addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	defer cancel()
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err // match returns host:port
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = p.resolve.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	var dialable []netip.Addr
	var refused []error
	for _, ip := range ips {
		if err := p.allow.addrs.check(ip); err != nil {
			refused = append(refused, err)
			continue
		}
		dialable = append(dialable, ip.Unmap())
	}
	if len(refused) > 0 && len(dialable) > 0 {
		// Not the agent's doing, perhaps, but a name of an allowed host
		// that also leads to the server's networks is worth knowing.
		p.log.Warn("sandbox proxy: skipped addresses of an allowed host that the proxy refuses", slog.String("job_id", p.jobID),
			slog.String("target", addr), slog.Any("error", errors.Join(refused...)))
	}
	if len(dialable) == 0 {
		if len(refused) == 0 {
			return nil, fmt.Errorf("%s has no address", host)
		}
		return nil, errors.Join(refused...)
	}
	var errs []error
	for i, ip := range dialable {
		attempt, cancelAttempt := ctx, context.CancelFunc(func() {})
		if left := len(dialable) - i; left > 1 {
			if deadline, ok := ctx.Deadline(); ok {
				share := max(time.Until(deadline)/time.Duration(left), minAttemptTimeout)
				attempt, cancelAttempt = context.WithTimeout(ctx, share)
			}
		}
		c, err := p.dial(attempt, netip.AddrPortFrom(ip, uint16(port)).String())
		cancelAttempt()
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// dialAddress opens a TCP connection to address, an IP address and a
// port, and checks once more, on the socket itself, that policy lets the
// proxy dial the address it connects to.
func dialAddress(ctx context.Context, address string, policy *addressPolicy) (net.Conn, error) {
	d := net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("sandbox proxy: dialing %q, which is not an address", address)
		}
		return policy.check(ap.Addr())
	}}
	return d.DialContext(ctx, "tcp", address)
}

// reply writes a response with a short text and no keep-alive.
func reply(c net.Conn, code int, text string) {
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(text), text)
}
