package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"unicode"

	docsapi "github.com/docsapi/docsapi-go"
)

// assistantKeyPrefix starts every assistant key (as the SDK's key.go and
// the server's assistantauth say).
const assistantKeyPrefix = "mint_dsc_"

// boldOn and boldOff mark a snippet's matched words on a terminal.
const boldOn, boldOff = "\x1b[1m", "\x1b[0m"

func searchCommand() *command {
	return &command{
		name:    "search",
		args:    "QUERY",
		summary: "search a site's documentation, as its search box does",
		help: `Searches the documentation of the site with the domain identifier --domain
(or DOCSAPI_DOMAIN) through the Assistant API's search, and prints the
results, best first: each section's link (path#anchor), its page's title and
heading, and the snippet with the matched words in bold on a terminal,
[in brackets] otherwise. --format json prints the results as the API sends
them, one {"content","path","metadata"} a line.

The search takes an assistant key (mint_dsc_...), not an admin API key: it
comes from DOCSAPI_ASSISTANT_KEY, else from DOCSAPI_KEY when that holds one.
A self-hosted server's operator creates one with 'docsapi assistant key
create'. An assistant key reaches one site, named by its domain; it cannot
list projects, so there is no --project. Each search counts in the site's
searches export, as a reader's does. The server comes from --base-url or
DOCSAPI_BASE_URL (default the hosted service).`,
		examples: `DOCSAPI_ASSISTANT_KEY=mint_dsc_... docsapi search --domain acme-docs "install with yarn"
docsapi search --limit 3 --format json "rate limits" | jq -r .metadata.href`,
		setup: func(fs *flag.FlagSet) runFunc {
			baseURL := fs.String("base-url", "", "API base `URL`, such as a self-hosted server's\n(env DOCSAPI_BASE_URL; default "+docsapi.DefaultBaseURL+")")
			domain := fs.String("domain", "", "the site's domain identifier `ID` (env DOCSAPI_DOMAIN)")
			format := fs.String("format", "text", "output `FORMAT`: text or json (one object a line)")
			limit := fs.Int("limit", 10, "print at most `N` results, 1 to 50")
			verbose := fs.Bool("verbose", false, "log every HTTP request's method, path, status and duration to stderr (never the key)")
			return func(ctx context.Context, s *stdio, args []string) error {
				switch {
				case len(args) == 0:
					return usagef("the query is missing: docsapi search [flags] QUERY")
				case len(args) > 1:
					return usagef("one query, in quotes if it has spaces; got %d arguments", len(args))
				case strings.TrimSpace(args[0]) == "":
					return usagef("the query is empty")
				case *format != "text" && *format != "json":
					return usagef("--format must be text or json, got %q", *format)
				case *limit < 1 || *limit > docsapi.MaxSearchPageSize:
					return usagef("--limit must be from 1 to %d, got %d", docsapi.MaxSearchPageSize, *limit)
				}
				d := *domain
				if !given(fs, "domain") {
					d = strings.TrimSpace(s.getenv("DOCSAPI_DOMAIN"))
				}
				if d == "" {
					return usagef("no site: pass --domain or set DOCSAPI_DOMAIN to the site's domain identifier")
				}
				base, baseFrom := *baseURL, "--base-url"
				if !given(fs, "base-url") {
					base, baseFrom = s.getenv("DOCSAPI_BASE_URL"), "DOCSAPI_BASE_URL"
				}
				if base == "" {
					base = docsapi.DefaultBaseURL
				}
				key, keySource, err := assistantKey(s)
				if err != nil {
					return err
				}
				opts := []docsapi.Option{docsapi.WithBaseURL(base), docsapi.WithUserAgent("docsapi-cli/" + cliVersion())}
				if *verbose {
					opts = append(opts, docsapi.WithLogger(slog.New(slog.NewTextHandler(s.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
				}
				client, err := docsapi.NewClient(key, opts...)
				if err != nil {
					var ve *docsapi.ValidationError
					if errors.As(err, &ve) && ve.Param == "baseURL" {
						return usagef("the base URL (from %s) %s", baseFrom, ve.Reason)
					}
					return fmt.Errorf("the key in %s: %w", keySource, err)
				}
				results, err := client.Assistant.Search(ctx, d, docsapi.SearchParams{Query: args[0], PageSize: *limit})
				if err != nil {
					return explainSearch(err, d, base, keySource)
				}
				if *format == "json" {
					return writeSearchJSON(s.stdout, results)
				}
				if len(results) == 0 {
					fmt.Fprintf(s.stderr, "no results for %q\n", args[0])
					return nil
				}
				writeSearchText(s.stdout, results, isTerminal(s.stdout))
				return nil
			}
		},
	}
}

// assistantKey returns the assistant key search uses and where it came
// from: DOCSAPI_ASSISTANT_KEY, else DOCSAPI_KEY when it holds one.
func assistantKey(s *stdio) (key, source string, err error) {
	if k := strings.TrimSpace(s.getenv("DOCSAPI_ASSISTANT_KEY")); k != "" {
		if !strings.HasPrefix(k, assistantKeyPrefix) {
			return "", "", usagef("DOCSAPI_ASSISTANT_KEY does not hold an assistant key (%s...)", assistantKeyPrefix)
		}
		return k, "DOCSAPI_ASSISTANT_KEY", nil
	}
	k := strings.TrimSpace(s.getenv("DOCSAPI_KEY"))
	if strings.HasPrefix(k, assistantKeyPrefix) {
		return k, "DOCSAPI_KEY", nil
	}
	why := "DOCSAPI_ASSISTANT_KEY is not set"
	if k != "" {
		why += ", and DOCSAPI_KEY holds an admin API key, which search does not take"
	}
	return "", "", usagef("search needs an assistant key (%s...): %s; a self-hosted server's operator creates one with 'docsapi assistant key create'", assistantKeyPrefix, why)
}

// explainSearch turns a failed search into an error that says what to do.
func explainSearch(err error, domain, base, keySource string) error {
	var ve *docsapi.ValidationError
	if errors.As(err, &ve) {
		return usagef("invalid %s: %s", ve.Param, ve.Reason)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var (
		urlErr *url.Error
		netErr *net.OpError
		hint   string
	)
	switch {
	case errors.Is(err, docsapi.ErrUnauthorized):
		hint = "the server refused the assistant key from " + keySource + " (unknown or revoked)"
	case errors.Is(err, docsapi.ErrForbidden):
		hint = "the assistant key from " + keySource + " is not the key of site " + domain + ": check --domain (or DOCSAPI_DOMAIN)"
	case errors.Is(err, docsapi.ErrNotFound):
		hint = "no search at " + base + " for site " + domain + ": check --base-url and --domain"
	case errors.Is(err, docsapi.ErrRateLimited):
		hint = "the rate limit is reached: try again later"
	case errors.Is(err, docsapi.ErrServer):
		hint = "the server failed; try again later, and quote the request id to its operator"
	case errors.As(err, &netErr), errors.As(err, &urlErr):
		hint = "cannot reach " + base + ": check --base-url (or DOCSAPI_BASE_URL) and the network"
	default:
		return err
	}
	return &hintError{err: err, hint: hint}
}

// writeSearchJSON writes the results as the API sent them, one a line.
func writeSearchJSON(w io.Writer, results []docsapi.SearchResult) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range results {
		md := r.Metadata
		if md == nil {
			md = map[string]any{}
		}
		if err := enc.Encode(struct {
			Content  string         `json:"content"`
			Path     string         `json:"path"`
			Metadata map[string]any `json:"metadata"`
		}{r.Content, r.Path, md}); err != nil {
			return err
		}
	}
	return nil
}

// writeSearchText writes each result as its link, its title and heading,
// and its snippet indented under them, the matches in bold (bold) or in
// brackets.
func writeSearchText(w io.Writer, results []docsapi.SearchResult, bold bool) {
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		link, _ := r.Metadata["href"].(string)
		if link == "" {
			link = r.Path
		}
		heading, _ := r.Metadata["heading"].(string)
		line := strings.TrimSpace(printable(link)) + "  " + strings.TrimSpace(printable(r.Title))
		if heading != "" && heading != r.Title {
			line += " › " + strings.TrimSpace(printable(heading))
		}
		fmt.Fprintln(w, line)
		fmt.Fprintf(w, "    %s\n", strings.TrimSpace(snippetText(r, bold)))
	}
}

// snippetText is the result's snippet with its matches marked, from the
// metadata's snippet parts ({text, match}) when the server sends them, else
// its content unmarked.
func snippetText(r docsapi.SearchResult, bold bool) string {
	parts, ok := r.Metadata["snippet"].([]any)
	if !ok {
		return printable(r.Content)
	}
	var b strings.Builder
	for _, p := range parts {
		part, _ := p.(map[string]any)
		text, _ := part["text"].(string)
		text = printable(text)
		switch {
		case part["match"] != true || strings.TrimSpace(text) == "":
			b.WriteString(text)
		case bold:
			b.WriteString(boldOn + text + boldOff)
		default:
			b.WriteString("[" + text + "]")
		}
	}
	return b.String()
}

// printable is s on one line, without the control characters (escape
// sequences among them, and the bidirectional overrides) that a document's
// text could hold to rewrite a terminal: each run of white space or
// controls is one space, kept at the ends, where a snippet's parts meet.
func printable(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.In(r, unicode.Bidi_Control) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
