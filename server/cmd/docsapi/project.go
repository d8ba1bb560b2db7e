package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

func projectCreateCommand() *command {
	return &command{
		name:    "project create",
		summary: "register a project in the server's storage",
		help: `Registers a project: the repository its agent jobs work on, the ref they start
from and the model they report. Jobs run only for projects that also appear
in serve's configuration file, which says which host and agent they use
(serve creates the projects of its file itself).` + storageHelp,
		examples: `docsapi project create --id handbook --repository https://github.com/acme/handbook.git --ref main
docsapi project create --data ./data --id wiki --repository /srv/git/wiki.git --name "Team wiki" --domain team-wiki`,
		setup: func(fs *flag.FlagSet) runFunc {
			var sf storageFlags
			sf.register(fs)
			id := fs.String("id", "", "project `ID` used in API paths: letters, digits, '.', '_' or '-' (required)")
			repo := fs.String("repository", "", "clone `URL` or local path of the docs repository (required)")
			ref := fs.String("ref", "", "`BRANCH` jobs start from (default: the repository's default branch)")
			model := fs.String("model", "", "the agent's `MODEL`, reported in jobs")
			name := fs.String("name", "", "a human-readable `NAME`")
			domain := fs.String("domain", "", "the project's `DOMAIN` identifier, by which the search and page endpoints\naddress it: a lower-case DNS label, unique across projects (serve's\nconfiguration file sets it for the projects it lists)")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				switch {
				case *id == "":
					return usagef("--id is required")
				case *repo == "":
					return usagef("--repository is required")
				}
				repository := *repo
				// The server clones from its own working folder: a local
				// path must not depend on where this command ran.
				if !strings.Contains(repository, ":") {
					if abs, err := filepath.Abs(repository); err == nil {
						repository = abs
					}
				}
				srv, st, loc, err := openAdmin(ctx, s, &sf, true)
				if err != nil {
					return err
				}
				defer st.Close()
				p, err := srv.CreateProject(ctx, store.Project{ID: *id, Name: *name, Repository: repository, Ref: *ref, Model: *model, Domain: *domain})
				if err != nil {
					return err
				}
				fmt.Fprintf(s.stderr, "created project %s (repository %s, ref %s) in %s\n", p.ID, p.Repository, or(p.Ref, "the default branch"), loc.describe())
				return st.Close()
			}
		},
	}
}

func projectListCommand() *command {
	return &command{
		name:    "project list",
		summary: "list the projects in the server's storage",
		help:    `Lists the projects, ordered by ID: a table, or JSON lines with --format json.` + storageHelp,
		examples: `docsapi project list
docsapi project list --format json | jq -r .id`,
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
				_, st, _, err := openAdmin(ctx, s, &sf, false)
				if err != nil {
					return err
				}
				defer st.Close()
				projects, err := st.Projects(ctx)
				if err != nil {
					return err
				}
				return writeList(s.stdout, *format, projects, func(p store.Project) any {
					return projectJSON{ID: p.ID, Name: p.Name, Repository: p.Repository, Ref: p.Ref, Model: p.Model, Domain: p.Domain, CreatedAt: p.CreatedAt}
				}, "ID\tNAME\tREPOSITORY\tREF\tMODEL\tDOMAIN\tCREATED", func(p store.Project) []string {
					return []string{p.ID, dash(p.Name), p.Repository, dash(p.Ref), dash(p.Model), dash(p.Domain), timeOrDash(p.CreatedAt)}
				})
			}
		},
	}
}

type projectJSON struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Repository string    `json:"repository"`
	Ref        string    `json:"ref"`
	Model      string    `json:"model"`
	Domain     string    `json:"domain"`
	CreatedAt  time.Time `json:"createdAt"`
}
