package main

import (
	"flag"
	"strings"
)

// projectFlag is the --project flag of every command that names one
// project, on the server's storage or through the API: DOCSAPI_PROJECT
// stands in for it when it is not given, so that one setting serves every
// command.
type projectFlag struct {
	fs *flag.FlagSet
	id string
}

// register adds --project to fs.
func (p *projectFlag) register(fs *flag.FlagSet, what string) {
	p.fs = fs
	fs.StringVar(&p.id, "project", "", what+" (env DOCSAPI_PROJECT)")
}

// get returns the project named by --project, else by DOCSAPI_PROJECT, or
// a usage error saying how to name one.
func (p *projectFlag) get(s *stdio) (string, error) {
	id := p.id
	if !given(p.fs, "project") {
		id = strings.TrimSpace(s.getenv("DOCSAPI_PROJECT"))
	}
	if id == "" {
		return "", usagef("no project: pass --project ID or set DOCSAPI_PROJECT")
	}
	return id, nil
}
