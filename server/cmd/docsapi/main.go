// Command docsapi is the command-line program of docsapi-go: it runs the
// self-hosted API server (serve), administers the server's storage
// (project, key) and, as a client of the hosted service or of any
// self-hosted server, starts and follows agent jobs (jobs) and exports page
// views (views export).
//
// Run "docsapi help" for the list of commands, and "docsapi <command>
// --help" for each command's flags, examples and exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks for a graceful stop; restoring the default
		// handling lets a second one end the process at once, which is what
		// someone pressing Ctrl-C twice expects.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
