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

func siteTokenCreateCommand() *command {
	return &command{
		name:    "site token create",
		summary: "create a site token for a docs site's pages (printed on stdout)",
		help: `Creates a site token: what a documentation site's pages send, from readers'
browsers, to record feedback and searches (POST /v1/site/{project}/feedback
and /searches). It is public by design, written into every page, and works
only from the origins given (https://docs.example.com: scheme, host and
optional port), for recording and nothing else. To rotate it, create another,
deploy the site with it, then revoke the first. To change its origins, do
the same.

The token is printed alone on stdout; the details go to stderr.` + storageHelp,
		examples: `docsapi site token create --project handbook --origin https://docs.example.com
docsapi site token create --project handbook --origin https://docs.example.com --origin http://localhost:3000 --name "docs and preview"`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			var project projectFlag
			project.register(fs, "`ID` of the project whose pages use the token")
			var origins listFlag
			fs.Var(&origins, "origin", "`ORIGIN` allowed to use the token, such as https://docs.example.com;\nrepeat or separate with commas (required)")
			name := fs.String("name", "", "what the token is for, shown by 'site token list'")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				projectID, err := project.get(s)
				if err != nil {
					return err
				}
				if len(origins) == 0 {
					return usagef("--origin is required: the origins of the site's pages, such as https://docs.example.com")
				}
				srv, st, loc, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				tok, err := srv.CreateSiteToken(ctx, server.SiteTokenParams{Project: projectID, Name: *name, Origins: origins})
				if err != nil {
					return err
				}
				if err := st.Close(); err != nil {
					return err
				}
				if _, err := fmt.Fprintln(s.stdout, tok.Token); err != nil {
					return err
				}
				fmt.Fprintf(s.stderr, "created site token for project %s%s, allowed from %s, in %s\n",
					tok.ProjectID, quotedName(tok.Name), strings.Join(tok.Origins, ", "), loc.describe())
				fmt.Fprintf(s.stderr, "embed: <script src=\"https://YOUR-SERVER/v1/site/%s/docsapi.js\" data-token=\"%s\" defer></script>\n", tok.ProjectID, tok.Token)
				return nil
			}
		},
	}
}

func siteTokenListCommand() *command {
	return &command{
		name:    "site token list",
		summary: "list the site tokens",
		help:    `Lists the site tokens, oldest first, with their project, origins and revocation: a table, or JSON lines with --format json. The tokens are public, so they are shown whole.` + storageHelp,
		examples: `docsapi site token list --project handbook
docsapi site token list --format json | jq -r 'select(.revokedAt == null) | .token'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			project := fs.String("project", "", "only the tokens of the project `ID` (default all)")
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
				toks, err := srv.SiteTokens(ctx, *project)
				if err != nil {
					return err
				}
				return writeList(s.stdout, *format, toks, func(t store.SiteToken) any { return newSiteTokenJSON(t) },
					"TOKEN\tPROJECT\tNAME\tORIGINS\tCREATED\tREVOKED", func(t store.SiteToken) []string {
						return []string{t.Token, t.ProjectID, dash(t.Name), strings.Join(t.Origins, ","),
							timeOrDash(t.CreatedAt), timeOrDash(t.RevokedAt)}
					})
			}
		},
	}
}

// siteTokenJSON is a token as site token list --format json prints it.
type siteTokenJSON struct {
	Token     string     `json:"token"`
	Project   string     `json:"project"`
	Name      string     `json:"name"`
	Origins   []string   `json:"origins"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

func newSiteTokenJSON(t store.SiteToken) siteTokenJSON {
	j := siteTokenJSON{Token: t.Token, Project: t.ProjectID, Name: t.Name, Origins: t.Origins, CreatedAt: t.CreatedAt.UTC()}
	if j.Origins == nil {
		j.Origins = []string{}
	}
	if !t.RevokedAt.IsZero() {
		r := t.RevokedAt.UTC()
		j.RevokedAt = &r
	}
	return j
}

func siteTokenRevokeCommand() *command {
	return &command{
		name:     "site token revoke",
		args:     "TOKEN",
		summary:  "revoke a site token at once",
		help:     `Revokes the site token; pages that send it are refused from now on. Revoking a revoked token changes nothing.` + storageHelp,
		examples: `docsapi site token revoke site_3kTz0aQ9bW1xYc2VdE4fGh5J`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args, "TOKEN"); err != nil {
					return err
				}
				srv, st, _, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				if err := srv.RevokeSiteToken(ctx, args[0]); err != nil {
					return &hintError{err: err, hint: "list the tokens with 'docsapi site token list'"}
				}
				fmt.Fprintf(s.stderr, "revoked site token %s\n", args[0])
				return st.Close()
			}
		},
	}
}
