package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

func assistantKeyCreateCommand() *command {
	return &command{
		name:    "assistant key create",
		summary: "create an assistant key (mint_dsc_...) for a project's search and page endpoints (printed on stdout)",
		help: `Creates an assistant key, the kind the hosted platform's Assistant API takes
(mint_dsc_...): it admits requests to one project's /discovery endpoints
(search and page content), which address the project by its domain
identifier ("domain" in serve's configuration file, or 'project create
--domain'); the project must have one.

A site's pages may hold the key: it works from browsers only on the origins
given (https://docs.example.com: scheme, host and optional port), each
address within its budget. Requests without an Origin header come from
servers and are admitted: a backend that proxies the key keeps it secret. A
key without --origin is for servers only. To rotate a key, create another,
deploy it, then revoke the first.

The key is printed alone on stdout, this once: the server keeps only its
hash. The details go to stderr.` + storageHelp,
		examples: `docsapi assistant key create --project handbook --origin https://docs.example.com
docsapi assistant key create --project handbook --name "search proxy"`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			var project projectFlag
			project.register(fs, "`ID` of the project whose endpoints the key calls")
			var origins listFlag
			fs.Var(&origins, "origin", "`ORIGIN` whose pages may use the key, such as https://docs.example.com;\nrepeat or separate with commas (default none: servers only)")
			name := fs.String("name", "", "what the key is for, shown by 'assistant key list'")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				projectID, err := project.get(s)
				if err != nil {
					return err
				}
				srv, st, loc, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				k, err := srv.CreateAssistantKey(ctx, server.AssistantKeyParams{Project: projectID, Name: *name, Origins: origins})
				if err != nil {
					return err
				}
				if err := st.Close(); err != nil {
					return err
				}
				if _, err := fmt.Fprintln(s.stdout, k.Secret); err != nil {
					return err
				}
				from := "servers only (no origin)"
				if len(k.Key.Origins) > 0 {
					from = strings.Join(k.Key.Origins, ", ") + " and servers"
				}
				fmt.Fprintf(s.stderr, "created assistant key %s for project %s%s, allowed from %s, in %s\n",
					k.Key.ID, k.Key.ProjectID, quotedName(k.Key.Name), from, loc.describe())
				fmt.Fprintln(s.stderr, "the key is shown this once: store it now")
				return nil
			}
		},
	}
}

func assistantKeyListCommand() *command {
	return &command{
		name:    "assistant key list",
		summary: "list the assistant keys",
		help:    `Lists the assistant keys, oldest first, with their project, origins and revocation: a table, or JSON lines with --format json. Only a hint of each key is kept, so none is shown whole.` + storageHelp,
		examples: `docsapi assistant key list --project handbook
docsapi assistant key list --format json | jq -r 'select(.revokedAt == null) | .id'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			project := fs.String("project", "", "only the keys of the project `ID` (default all)")
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
				keys, err := srv.AssistantKeys(ctx, *project)
				if err != nil {
					return err
				}
				return writeList(s.stdout, *format, keys, func(k store.AssistantKey) any { return newAssistantKeyJSON(k) },
					"ID\tKEY\tPROJECT\tNAME\tORIGINS\tCREATED\tREVOKED", func(k store.AssistantKey) []string {
						origins := strings.Join(k.Origins, ",")
						if origins == "" {
							origins = "(servers only)"
						}
						return []string{k.ID, k.Hint, k.ProjectID, dash(k.Name), origins,
							timeOrDash(k.CreatedAt), timeOrDash(k.RevokedAt)}
					})
			}
		},
	}
}

// assistantKeyJSON is a key as assistant key list --format json prints it.
type assistantKeyJSON struct {
	ID        string     `json:"id"`
	Hint      string     `json:"hint"`
	Project   string     `json:"project"`
	Name      string     `json:"name"`
	Origins   []string   `json:"origins"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

func newAssistantKeyJSON(k store.AssistantKey) assistantKeyJSON {
	j := assistantKeyJSON{ID: k.ID, Hint: k.Hint, Project: k.ProjectID, Name: k.Name, Origins: k.Origins, CreatedAt: k.CreatedAt.UTC()}
	if j.Origins == nil {
		j.Origins = []string{}
	}
	if !k.RevokedAt.IsZero() {
		r := k.RevokedAt.UTC()
		j.RevokedAt = &r
	}
	return j
}

func assistantKeyRevokeCommand() *command {
	return &command{
		name:     "assistant key revoke",
		args:     "ID",
		summary:  "revoke an assistant key",
		help:     `Revokes the assistant key with this ID (as 'assistant key list' shows it); requests with it are refused within a second, the time a running server trusts a key it has verified. Revoking a revoked key changes nothing.` + storageHelp,
		examples: `docsapi assistant key revoke akey_3kTz0aQ9bW1xYc2V`,
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
				if err := srv.RevokeAssistantKey(ctx, args[0]); err != nil {
					return &hintError{err: err, hint: "list the keys with 'docsapi assistant key list'"}
				}
				fmt.Fprintf(s.stderr, "revoked assistant key %s\n", args[0])
				return st.Close()
			}
		},
	}
}
