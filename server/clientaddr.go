package server

import (
	"net/http"
	"net/netip"
)

// clientAddr is the address of r's client, as Config.TrustedProxies
// allow it to be known (see package internal/clientip).
func (s *Server) clientAddr(r *http.Request) netip.Addr { return s.proxies.Addr(r) }
