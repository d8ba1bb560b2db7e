package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/store"
)

// This file holds what the project and key commands (project.go, key.go)
// share: they work on the server's storage directly, through the server's
// admin API.

// storageHelp ends the help of every command that works on the storage.
const storageHelp = `

It works on the server's storage directly (--data, --database, or those of
the configuration file), so it needs no running server and no API key; with
SQLite it may run while the server runs.`

// openAdmin opens the storage and a Server on it, without a listener: the
// admin API (CreateProject, CreateKey, ...) is what the commands use, so they
// validate exactly as the server does.
func openAdmin(ctx context.Context, s *stdio, sf *storageFlags, create bool) (*server.Server, store.Store, storage, error) {
	file, _, err := sf.loadFile(s.getenv)
	if err != nil {
		return nil, nil, storage{}, err
	}
	loc, err := sf.resolve(s.getenv, file)
	if err != nil {
		return nil, nil, storage{}, err
	}
	st, err := openStore(ctx, loc, create, nil)
	if err != nil {
		return nil, nil, storage{}, err
	}
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		st.Close()
		return nil, nil, storage{}, err
	}
	return srv, st, loc, nil
}

func checkListFormat(f string) error {
	if f != "table" && f != "json" {
		return usagef("unknown format %q: use table or json", f)
	}
	return nil
}

// writeList prints the rows of a list command in its --format: json, one
// object a line (asJSON's), else a table under header whose rows are
// cells' values, tab-separated.
func writeList[T any](w io.Writer, format string, rows []T, asJSON func(T) any, header string, cells func(T) []string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(asJSON(r)); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(cells(r), "\t"))
	}
	return tw.Flush()
}

func dash(s string) string { return or(s, "-") }

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
