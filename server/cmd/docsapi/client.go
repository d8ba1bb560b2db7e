package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	docsapi "github.com/docsapi/docsapi-go"
)

// clientHelp ends the help of every client command.
const clientHelp = `

The key comes from DOCSAPI_KEY (or --key-file), the server from --base-url or
DOCSAPI_BASE_URL (default the hosted service), the project from --project or
DOCSAPI_PROJECT.`

// clientFlags are the flags of every client command. There is no --key
// flag on purpose: a key on the command line ends up in shell history and in
// every user's view of ps.
type clientFlags struct {
	fs               *flag.FlagSet
	baseURL, keyFile string
	project          projectFlag
	verbose          bool
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.baseURL, "base-url", "", "API base `URL`, such as a self-hosted server's\n(env DOCSAPI_BASE_URL; default "+docsapi.DefaultBaseURL+")")
	c.project.register(fs, "project `ID`")
	fs.StringVar(&c.keyFile, "key-file", "", "read the admin API key from `FILE` instead of the env DOCSAPI_KEY")
	fs.BoolVar(&c.verbose, "verbose", false, "log every HTTP request's method, path, status and duration to stderr (never the key)")
}

// apiClient is an SDK client with what the commands need to explain errors.
type apiClient struct {
	*docsapi.Client
	project   string
	baseURL   string
	keySource string
	// key is for the self-hosted endpoints the SDK has no method for
	// (gaps.go); behind a pointer so that no verb prints it.
	key *string
}

// client builds the SDK client from the flags and the environment.
func (c *clientFlags) client(s *stdio) (*apiClient, error) {
	base, baseFrom := c.baseURL, "--base-url"
	if !given(c.fs, "base-url") {
		base, baseFrom = s.getenv("DOCSAPI_BASE_URL"), "DOCSAPI_BASE_URL"
	}
	if base == "" {
		base = docsapi.DefaultBaseURL
	}
	// A missing key is told first: it is what a first run lacks.
	project, projectErr := c.project.get(s)

	var key, keySource string
	if given(c.fs, "key-file") {
		keySource = "the key file " + c.keyFile
		b, err := os.ReadFile(c.keyFile)
		if err != nil {
			return nil, fmt.Errorf("reading the key: %w", err)
		}
		if key = strings.TrimSpace(string(b)); key == "" {
			return nil, fmt.Errorf("the key file %s is empty", c.keyFile)
		}
		if fi, err := os.Stat(c.keyFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(s.stderr, "warning: the key file %s can be read by other users (mode %s); consider chmod 600\n", c.keyFile, fi.Mode().Perm())
		}
	} else {
		keySource = "DOCSAPI_KEY"
		if key = strings.TrimSpace(s.getenv("DOCSAPI_KEY")); key == "" {
			return nil, &hintError{
				err:  errors.New("no API key"),
				hint: "set DOCSAPI_KEY to an admin API key (or pass --key-file FILE); a self-hosted server's operator creates one with 'docsapi key create'",
			}
		}
	}
	if projectErr != nil {
		return nil, projectErr
	}

	if u, err := url.Parse(base); err == nil && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		fmt.Fprintf(s.stderr, "warning: %s is plain http: the key crosses the network unencrypted\n", base)
	}
	opts := []docsapi.Option{
		docsapi.WithBaseURL(base),
		docsapi.WithProjectID(project),
		docsapi.WithUserAgent("docsapi-cli/" + cliVersion()),
	}
	if c.verbose {
		opts = append(opts, docsapi.WithLogger(slog.New(slog.NewTextHandler(s.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	client, err := docsapi.NewClient(key, opts...)
	if err != nil {
		var ve *docsapi.ValidationError
		if errors.As(err, &ve) {
			switch ve.Param {
			case "apiKey":
				return nil, fmt.Errorf("the key in %s %s", keySource, ve.Reason)
			case "baseURL":
				return nil, usagef("the base URL (from %s) %s", baseFrom, ve.Reason)
			case "projectID":
				return nil, usagef("the project ID %s", ve.Reason)
			}
		}
		return nil, err
	}
	return &apiClient{Client: client, project: project, baseURL: base, keySource: keySource, key: &key}, nil
}

// flagNames turns the API's parameter names in the SDK's messages into the
// flags a user of the command gave.
var flagNames = strings.NewReplacer("dateFrom", "--from", "dateTo", "--to")

// scopeFor names the scope the failed request needed, by the server's
// rule: reading (GET) needs read, which write implies; everything else
// needs write.
func scopeFor(err error) string {
	var ae *docsapi.APIError
	if errors.As(err, &ae) && ae.Method != http.MethodGet {
		return "write"
	}
	return "read (or write)"
}

// explain turns an SDK error into one that says what to do about it.
func (c *apiClient) explain(err error) error {
	var ve *docsapi.ValidationError
	if errors.As(err, &ve) {
		return usagef("invalid %s: %s", flagNames.Replace(ve.Param), flagNames.Replace(ve.Reason))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // report says "interrupted"; no advice helps
	}
	var hint string
	var (
		urlErr *url.Error
		netErr *net.OpError
	)
	switch {
	case errors.Is(err, docsapi.ErrUnauthorized):
		hint = "the server refused the key from " + c.keySource + " (unknown, expired or revoked): set DOCSAPI_KEY to a valid admin API key"
	case errors.Is(err, docsapi.ErrForbidden):
		hint = "the key is not allowed to do this: it must be bound to project " + c.project + " and have the " + scopeFor(err) + " scope"
	case errors.Is(err, docsapi.ErrNotFound):
		hint = "no such project or job: check --project (or DOCSAPI_PROJECT), the job ID and --base-url"
	case errors.Is(err, docsapi.ErrRateLimited):
		hint = "the rate limit is reached: try again later"
	case errors.Is(err, docsapi.ErrConflict):
		hint = "this idempotency key was used for another request: use a new key for a new request"
	case errors.Is(err, docsapi.ErrServer):
		hint = "the server failed; try again later, and quote the request id to its operator"
	case errors.As(err, &netErr), errors.As(err, &urlErr):
		hint = "cannot reach " + c.baseURL + ": check --base-url (or DOCSAPI_BASE_URL) and the network"
	default:
		return err
	}
	return &hintError{err: err, hint: hint}
}

// isLoopback reports whether host names this machine, where plain http
// exposes nothing.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
