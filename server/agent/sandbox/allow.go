package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// defaultPort is the port of an AllowHosts entry that names none: agents
// talk to their model's API over HTTPS.
const defaultPort = 443

// allowlist holds the destinations the proxy opens tunnels to: the hosts
// it may name, and the addresses it may dial for them.
type allowlist struct {
	exact map[string]bool // "host:port", host lower-case, IPv6 in brackets
	wild  []wildcard
	addrs *addressPolicy // never nil
}

// wildcard is a "*.example.com" entry: any subdomain of domain, at any
// depth, on port; never domain itself.
type wildcard struct {
	domain string // "example.com"
	port   int
}

// parseAllowlist checks and normalises the AllowHosts entries. Entries are
// strict on purpose: a typo that widened the list (a scheme, a path, a
// bare "*") would quietly let an agent reach more than the operator meant.
func parseAllowlist(entries []string) (*allowlist, error) {
	a := &allowlist{exact: map[string]bool{}, addrs: &addressPolicy{}}
	for _, e := range entries {
		host, port, err := splitEntry(e)
		if err != nil {
			return nil, fmt.Errorf("sandbox: AllowHosts entry %q: %w", e, err)
		}
		if domain, ok := strings.CutPrefix(host, "*."); ok {
			a.wild = append(a.wild, wildcard{domain: domain, port: port})
			continue
		}
		a.exact[net.JoinHostPort(host, strconv.Itoa(port))] = true
	}
	return a, nil
}

// splitEntry parses "host", "host:port", "[v6]" or "[v6]:port", with "*."
// allowed before a domain name. It returns the host lower-cased and
// without brackets.
func splitEntry(e string) (string, int, error) {
	switch {
	case e == "":
		return "", 0, errors.New("it is empty")
	case strings.Contains(e, "://"):
		return "", 0, errors.New("write a host name, not a URL (no scheme: api.example.com or api.example.com:443)")
	case strings.ContainsAny(e, "/?#@ \t"):
		return "", 0, errors.New("write a host name and an optional port, nothing else")
	}
	host, port := e, defaultPort
	if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		host = e[1 : len(e)-1]
	} else if strings.Contains(e, ":") {
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			return "", 0, errors.New("not host:port (write IPv6 addresses in brackets: [2001:db8::1]:443)")
		}
		n, err := parsePort(p)
		if err != nil {
			return "", 0, err
		}
		host, port = h, n
	}
	host = strings.ToLower(host)
	if domain, ok := strings.CutPrefix(host, "*."); ok {
		if err := checkDomain(domain); err != nil {
			return "", 0, err
		}
		if strings.Count(domain, ".") == 0 {
			return "", 0, fmt.Errorf("the wildcard would allow every host under %q: name a domain such as *.example.com", domain)
		}
		if _, err := netip.ParseAddr(domain); err == nil {
			return "", 0, errors.New("a wildcard applies to domain names, not to IP addresses")
		}
		return host, port, nil
	}
	if strings.Contains(host, "*") {
		return "", 0, errors.New(`a wildcard is allowed only as the first label, for subdomains: "*.example.com"`)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return "", 0, errors.New("an IPv6 zone is not allowed")
		}
		return ip.String(), port, nil
	}
	if err := checkDomain(host); err != nil {
		return "", 0, err
	}
	return host, port, nil
}

// checkAddresses refuses an entry that names an address the proxy would
// refuse to dial: it would be refused at every connection, so it is a
// mistake to be told at start, with the setting that allows it.
func (a *allowlist) checkAddresses() error {
	for _, entry := range slices.Sorted(maps.Keys(a.exact)) {
		host, _, _ := net.SplitHostPort(entry)
		ip, err := netip.ParseAddr(host)
		if err != nil {
			continue // a name, checked at each connection
		}
		if err := a.addrs.check(ip); err != nil {
			return fmt.Errorf("sandbox: AllowHosts entry %q: %s is %s, which the proxy refuses unless AllowAddresses allows it (add %q to AllowAddresses if the agent must reach it)",
				entry, ip, refusedClass(ip), ip.Unmap().String())
		}
	}
	return nil
}

// refusedClass says what kind of refused address ip is.
func refusedClass(ip netip.Addr) string {
	if ip.Zone() != "" {
		return "an address with a zone"
	}
	class, _ := classify(ip.Unmap())
	return class
}

// parsePort parses a decimal port from 1 to 65535.
func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(p, "+") || (p[0] == '0') {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return n, nil
}

// checkDomain checks a lower-case DNS name: letters, digits and inner
// hyphens in labels of 1 to 63 characters.
func checkDomain(d string) error {
	if d == "" || len(d) > 253 {
		return fmt.Errorf("%q is not a host name", d)
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is not a host name", d)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("%q is not a host name (character %q)", d, c)
			}
		}
	}
	return nil
}

// match reports whether a CONNECT target ("host:port", as the client sent
// it) is on the list, and returns the address to dial: the target in its
// canonical form. The host matches case-insensitively; a wildcard matches
// subdomains only. A target that is not a well-formed name or address
// matches nothing.
func (a *allowlist) match(target string) (string, bool) {
	host, p, err := net.SplitHostPort(target)
	if err != nil {
		return "", false
	}
	port, err := parsePort(p)
	if err != nil {
		return "", false
	}
	host = strings.ToLower(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		// The canonical form, so that "::0001" names the same entry as
		// "::1".
		addr := net.JoinHostPort(ip.String(), strconv.Itoa(port))
		return addr, ip.Zone() == "" && a.exact[addr]
	}
	if checkDomain(host) != nil {
		return "", false
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	if a.exact[addr] {
		return addr, true
	}
	for _, w := range a.wild {
		if w.port == port && strings.HasSuffix(host, "."+w.domain) {
			return addr, true
		}
	}
	return "", false
}
