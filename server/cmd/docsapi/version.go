package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	docsapi "github.com/docsapi/docsapi-go"
)

func versionCommand() *command {
	return &command{
		name:     "version",
		summary:  "print the version",
		help:     `Prints the program's version, the commit it was built from when known, the SDK's version and the Go version.`,
		examples: `docsapi version`,
		setup: func(fs *flag.FlagSet) runFunc {
			return func(_ context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				commit := ""
				if rev, dirty := buildCommit(); rev != "" {
					commit = " commit " + rev
					if dirty {
						commit += " (modified)"
					}
				}
				_, err := fmt.Fprintf(s.stdout, "docsapi %s%s (SDK docsapi-go %s, %s %s/%s)\n",
					cliVersion(), commit, docsapi.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return err
			}
		},
	}
}

// cliVersion is the module version the binary was built from ("go install
// ...@v1.2.3" records it), else the SDK's version, which the program ships with.
func cliVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return docsapi.Version
}

// buildCommit is the VCS revision recorded by "go build" in a checkout.
func buildCommit() (rev string, dirty bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
			if len(rev) > 12 {
				rev = rev[:12]
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}
