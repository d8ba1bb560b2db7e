package site

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// NormalizeOrigin returns a web origin as browsers send it in the Origin
// header: scheme and host in lower case, the scheme's default port left
// out. Anything but scheme://host[:port] is refused, so that an allowlist
// entry cannot look broader or narrower than what it matches.
func NormalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("the scheme must be http or https")
	case u.Opaque != "" || u.Host == "":
		return "", errors.New("no host")
	case u.User != nil:
		return "", errors.New("an origin has no user name or password")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", errors.New("an origin has no path, query or fragment: only scheme://host[:port]")
	case strings.ContainsAny(u.Host, "*%"):
		return "", errors.New("wildcards are not supported: list each origin")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host, nil
}
