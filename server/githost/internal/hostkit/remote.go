// Package hostkit holds what the GitHub and GitLab hosts share and neither
// library provides: Ensurer, the find → create → find-again sequence of
// Ensure with its error classification, over the small API each host
// implements; reading a git remote URL; deciding which HTTP statuses a retry
// cannot mend; the shared configuration checks and their token-free printed
// form; and an HTTP transport that keeps the token on the API's host. It
// imports no host library, so each host package pulls in only its own.
package hostkit

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Remote is a hosted repository's address, as read from a clone URL.
type Remote struct {
	// Scheme is the URL's scheme, lower-cased, or "ssh" for the scp-like
	// form.
	Scheme string
	// Host is the host name, lower-cased, without a port: the same
	// repository is reached on different ports over HTTPS and SSH.
	Host string
	// Path is the repository's path on the host, without a leading or
	// trailing slash and without the ".git" suffix, for example
	// "group/sub/repo".
	Path string
}

// ParseRemote reads a clone URL in one of the forms git accepts for a hosted
// repository: "https://host/path(.git)", "http://…", "ssh://[user@]host[:port]/path",
// "git+ssh://…", or the scp-like "[user@]host:path". Local paths and file URLs
// are refused: they name no host to open a pull request on. The error never
// repeats the URL's user information, which may hold a token.
func ParseRemote(raw string) (Remote, error) {
	shown := Redact(raw)
	if strings.TrimSpace(raw) == "" {
		return Remote{}, errors.New("the repository URL is empty")
	}
	var scheme, host, path string
	if i := strings.Index(raw, "://"); i >= 0 {
		u, err := url.Parse(raw)
		if err != nil {
			return Remote{}, fmt.Errorf("the repository URL %q is not a valid URL", shown)
		}
		switch strings.ToLower(u.Scheme) {
		case "https", "http", "ssh", "git+ssh", "ssh+git":
		default:
			return Remote{}, fmt.Errorf("the repository URL %q uses the scheme %q; a hosted repository needs https, http or ssh", shown, u.Scheme)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return Remote{}, fmt.Errorf("the repository URL %q has a query or a fragment; give the clone URL", shown)
		}
		scheme, host, path = strings.ToLower(u.Scheme), u.Hostname(), u.Path
	} else {
		// The scp-like form: [user@]host:path. A colon must come before any
		// slash, otherwise git reads the string as a local path.
		colon := strings.Index(raw, ":")
		slash := strings.Index(raw, "/")
		if colon < 0 || (slash >= 0 && slash < colon) {
			return Remote{}, fmt.Errorf("the repository URL %q is a local path, not a hosted repository", shown)
		}
		scheme, host = "ssh", raw[:colon]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		path = raw[colon+1:]
	}
	host = strings.ToLower(host)
	if host == "" || strings.ContainsAny(host, " /\\[]") {
		return Remote{}, fmt.Errorf("the repository URL %q names no valid host", shown)
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if path == "" {
		return Remote{}, fmt.Errorf("the repository URL %q names no repository", shown)
	}
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, " \\?#%") {
			return Remote{}, fmt.Errorf("the repository URL %q has an invalid path", shown)
		}
	}
	return Remote{Scheme: scheme, Host: host, Path: path}, nil
}

// Redact returns raw with any user information of a URL replaced, for use in
// messages: "https://x-access-token:SECRET@github.com/o/r" shows as
// "https://***@github.com/o/r". The scp-like form keeps its user ("git@…"),
// which SSH uses as a login name, never as a secret.
func Redact(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return raw[:i+3] + "***" + rest[at:]
	}
	return raw
}

// HostMatches reports whether host is one of hosts, ignoring case.
func HostMatches(host string, hosts []string) bool {
	for _, h := range hosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// Branch turns a ref given as a job's base into the branch name that pull
// request APIs take: "refs/heads/main" becomes "main". Other refs (tags,
// commits) are passed on unchanged, and the host then refuses them as a base,
// which is the honest answer: a pull request can only target a branch.
func Branch(ref string) string {
	return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
}

// PermanentStatus reports whether an API answer with this HTTP status means
// that trying the same request again later cannot succeed: a client error,
// except the ones that describe a passing state (a timeout, a conflict with a
// concurrent change, "too early", a rate limit).
func PermanentStatus(code int) bool {
	if code < 400 || code > 499 {
		return false
	}
	switch code {
	case 408, 409, 425, 429:
		return false
	}
	return true
}
