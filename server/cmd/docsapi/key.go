package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

func keyCreateCommand() *command {
	return &command{
		name:    "key create",
		summary: "create an admin API key (printed once on stdout)",
		help: `Creates an admin API key bound to one or more projects, with the scopes read
(GET requests) and/or write (everything else; implies read).

The key is printed once, alone on stdout, so a script can capture it; only
its hash is stored, so it cannot be shown again. The details go to stderr.` + storageHelp,
		examples: `docsapi key create --project handbook --scope write --name "release bot" > bot.key
DOCSAPI_KEY=$(docsapi key create --project handbook --scope read --expires 720h)
docsapi key create --project handbook --project wiki --scope read,write --expires 90d`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			var projects, scopes listFlag
			fs.Var(&projects, "project", "`ID` of a project the key may use; repeat for several (required)")
			fs.Var(&scopes, "scope", "`SCOPE` read or write; repeat or separate with commas (required)")
			name := fs.String("name", "", "what the key is for, shown by 'key list'")
			expires := fs.String("expires", "", "when the key stops working: a `DURATION` from now (720h, 90d)\nor a date or time (2027-01-31, 2027-01-31T12:00:00Z) (default never)")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				if len(projects) == 0 {
					return usagef("--project is required: the key must be bound to at least one project")
				}
				if len(scopes) == 0 {
					return usagef("--scope is required: read, write, or both")
				}
				var sc []store.Scope
				for _, v := range scopes {
					if v != string(store.ScopeRead) && v != string(store.ScopeWrite) {
						return usagef("unknown scope %q: use read or write", v)
					}
					sc = append(sc, store.Scope(v))
				}
				expiresAt, err := parseExpiry(*expires, time.Now())
				if err != nil {
					return err
				}
				srv, st, loc, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				key, err := srv.CreateKey(ctx, server.KeyParams{Name: *name, Projects: projects, Scopes: sc, ExpiresAt: expiresAt})
				if err != nil {
					return err
				}
				if err := st.Close(); err != nil {
					return err
				}
				// Only the key on stdout: "KEY=$(docsapi key create ...)" works.
				if _, err := fmt.Fprintln(s.stdout, key.Secret); err != nil {
					return err
				}
				k := key.Key
				fmt.Fprintf(s.stderr, "created key %s%s for project %s with scope %s, expiring %s, in %s\n",
					k.ID, quotedName(k.Name), strings.Join(k.Projects, ", "), joinScopes(k.Scopes), expiryText(k.ExpiresAt), loc.describe())
				fmt.Fprintln(s.stderr, "the key is shown only this once: store it now (only its hash is kept)")
				return nil
			}
		},
	}
}

func keyListCommand() *command {
	return &command{
		name:    "key list",
		summary: "list the API keys (never their secrets)",
		help: `Lists the keys, oldest first: ID, name, hint (the key's first characters),
projects, scopes, and when each was created, expires and was revoked. The
secrets are not kept, so they cannot be listed.` + storageHelp,
		examples: `docsapi key list
docsapi key list --format json | jq -r 'select(.revokedAt == null) | .id'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			format := fs.String("format", "table", "output `FORMAT`: table or json (one object a line)")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				if err := checkListFormat(*format); err != nil {
					return err
				}
				srv, st, _, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				keys, err := srv.Keys(ctx)
				if err != nil {
					return err
				}
				now := time.Now()
				return writeList(s.stdout, *format, keys, func(k store.APIKey) any { return newKeyJSON(k) },
					"ID\tNAME\tHINT\tPROJECTS\tSCOPES\tCREATED\tEXPIRES\tREVOKED", func(k store.APIKey) []string {
						expires := "never"
						if !k.ExpiresAt.IsZero() {
							expires = k.ExpiresAt.UTC().Format(time.RFC3339)
							if !k.ExpiresAt.After(now) {
								expires += " (expired)"
							}
						}
						return []string{k.ID, dash(k.Name), k.Hint, strings.Join(k.Projects, ","),
							joinScopes(k.Scopes), timeOrDash(k.CreatedAt), expires, timeOrDash(k.RevokedAt)}
					})
			}
		},
	}
}

// keyJSON is a key as key list --format json prints it: never the hash.
type keyJSON struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Hint      string     `json:"hint"`
	Projects  []string   `json:"projects"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

func newKeyJSON(k store.APIKey) keyJSON {
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.UTC()
		return &t
	}
	scopes := make([]string, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = string(s)
	}
	return keyJSON{ID: k.ID, Name: k.Name, Hint: k.Hint, Projects: k.Projects, Scopes: scopes,
		CreatedAt: k.CreatedAt.UTC(), ExpiresAt: opt(k.ExpiresAt), RevokedAt: opt(k.RevokedAt)}
}

func keyRevokeCommand() *command {
	return &command{
		name:     "key revoke",
		args:     "ID",
		summary:  "revoke an API key",
		help:     `Revokes the key with this ID (as 'key list' shows it); requests with it are refused within a second, the time a running server trusts a key it has verified. Revoking a revoked key changes nothing.` + storageHelp,
		examples: `docsapi key revoke key_3kTz0aQ9bW1xYc2V`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args, "ID"); err != nil {
					return err
				}
				srv, st, _, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				if err := srv.RevokeKey(ctx, args[0]); err != nil {
					return &hintError{err: err, hint: "list the keys with 'docsapi key list'"}
				}
				fmt.Fprintf(s.stderr, "revoked key %s\n", args[0])
				return st.Close()
			}
		},
	}
}

// parseExpiry reads --expires: a duration from now (Go syntax, plus "d" for
// days, since keys tend to live for days), a date (midnight UTC) or an RFC
// 3339 time.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return now.Add(time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, usagef("--expires %s: the duration must be positive", s)
		}
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--expires %q: use a duration (720h, 90d), a date (2027-01-31) or a time (2027-01-31T12:00:00Z)", s)
}

func joinScopes(scopes []store.Scope) string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ",")
}

func quotedName(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" (%q)", name)
}

func expiryText(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
