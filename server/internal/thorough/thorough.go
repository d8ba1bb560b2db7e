// Package thorough tells the server's tests whether to run their thorough
// tier: the planted-bug runs, which re-run a suite once per planted bug,
// and the full-size versions of scale tests, whose small versions always
// run. CI sets the variable; a developer's go test leaves it unset and
// stays within minutes.
package thorough

import (
	"os"
	"strconv"
	"testing"
)

// Env names the variable that turns the thorough tier on: "1" (or any
// value strconv.ParseBool takes as true).
const Env = "DOCSAPI_TEST_THOROUGH"

// Enabled reports whether Env turns the thorough tier on.
func Enabled() bool {
	on, err := strconv.ParseBool(os.Getenv(Env))
	return err == nil && on
}

// Require skips t, naming Env, unless the thorough tier is on. what says
// what the test does that puts it in the tier, for the skip's message.
func Require(t testing.TB, what string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("%s: runs only with %s=1 (CI sets it)", what, Env)
	}
}
