// Package clientip finds the address of the client a request comes from,
// trusting the forwarding headers only as far as they were written by
// proxies the operator names.
//
// Anyone can send X-Forwarded-For or Forwarded: a server that believed
// them would let every client choose its address, and so its rate limit and
// its visitor identity. So the headers are read only when the connection's
// peer is a trusted proxy, and then from the right: each trusted proxy
// appends the address it received the request from, so the rightmost
// address that is not a trusted proxy is the first one no trusted proxy
// vouches for — the client. What lies to its left was written by the
// client itself and is ignored.
package clientip

import (
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the networks whose addresses are trusted proxies. The zero
// Proxies trusts none: the client is the connection's peer.
type Proxies struct {
	nets []netip.Prefix
}

// NewProxies returns the Proxies of trusted, each network masked to its
// prefix length.
func NewProxies(trusted []netip.Prefix) Proxies {
	nets := make([]netip.Prefix, 0, len(trusted))
	for _, p := range trusted {
		if p.IsValid() {
			nets = append(nets, p.Masked())
		}
	}
	return Proxies{nets: nets}
}

// Trusts reports whether addr is a trusted proxy's.
func (p Proxies) Trusts(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, n := range p.nets {
		if n.Contains(addr) {
			return true
		}
	}
	return false
}

// Addr returns the address of r's client: the connection's peer, unless
// that is a trusted proxy, in which case the rightmost address of the
// forwarding header that is not a trusted proxy's. The Forwarded header
// (RFC 7239) is read when present, X-Forwarded-For otherwise; an entry that
// is not an address (a name, "unknown", garbage) ends the walk, and the
// last address vouched for is the answer. The zero Addr means r.RemoteAddr
// was not an address (as in some tests' requests).
func (p Proxies) Addr(r *http.Request) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !p.Trusts(peer) {
		return peer
	}
	hops := forwarded(r.Header)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		addr, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = addr
		if !p.Trusts(addr) {
			break
		}
	}
	return client
}

// peerAddr parses a RemoteAddr ("ip:port", or a bare ip).
func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}

// forwarded returns the hops of the forwarding header, in order, from all
// of its lines: the for= values of Forwarded, or X-Forwarded-For's entries.
func forwarded(h http.Header) []string {
	var hops []string
	if lines := h.Values("Forwarded"); len(lines) > 0 {
		for _, line := range lines {
			for _, elem := range strings.Split(line, ",") {
				hop := ""
				for _, pair := range strings.Split(elem, ";") {
					k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
					if strings.EqualFold(k, "for") {
						hop = v
					}
				}
				// An element without for= is a hop that did not say
				// whom it received the request from: unknown.
				hops = append(hops, hop)
			}
		}
		return hops
	}
	for _, line := range h.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(line, ",")...)
	}
	return hops
}

// parseHop parses one hop: an address, with or without a port, IPv6 in
// brackets or not, a Forwarded value possibly quoted.
func parseHop(hop string) (netip.Addr, bool) {
	hop = strings.Trim(strings.TrimSpace(hop), `"`)
	if a, err := netip.ParseAddr(hop); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap(), true
	}
	// "[2001:db8::1]" without a port.
	if strings.HasPrefix(hop, "[") && strings.HasSuffix(hop, "]") {
		if a, err := netip.ParseAddr(hop[1 : len(hop)-1]); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}
