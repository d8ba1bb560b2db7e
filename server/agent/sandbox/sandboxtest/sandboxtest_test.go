package sandboxtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that notes a skip or a failure instead of
// ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestRequire(t *testing.T) {
	unavailable := errors.New("the agent sandbox cannot run here: bubblewrap is not installed")
	for _, tt := range []struct {
		name, env string
		err       error
		skip      bool
		fail      bool
	}{
		{name: "available", err: nil},
		{name: "available, required", env: "required", err: nil},
		{name: "unavailable", err: unavailable, skip: true},
		{name: "unavailable, another value", env: "1", err: unavailable, skip: true},
		{name: "unavailable, required", env: "required", err: unavailable, fail: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(variable, tt.env)
			r := &recorder{TB: t}
			Require(r, tt.err)
			if (r.skipped != "") != tt.skip || (r.failed != "") != tt.fail {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tt.skip, tt.fail)
			}
			for _, msg := range []string{r.skipped, r.failed} {
				if msg != "" && !strings.Contains(msg, unavailable.Error()) {
					t.Errorf("%q does not give the reason", msg)
				}
			}
			if r.failed != "" && !strings.Contains(r.failed, "DOCSAPI_TEST_SANDBOX=required") {
				t.Errorf("%q does not name the variable", r.failed)
			}
		})
	}
}
