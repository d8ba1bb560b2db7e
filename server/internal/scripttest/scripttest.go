// Package scripttest writes the executable scripts tests run (fake agents,
// git hooks, a fake git) so that running them never fails with "text file
// busy".
package scripttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Write makes an executable file at path holding content, through a child
// process, so that the test's own process never holds it open for
// writing: a test running in parallel that forked meanwhile would carry
// that descriptor into its child until the child's exec, and running the
// script in that window fails with "text file busy" (ETXTBSY).
func Write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing the script %s: %v: %s", path, err, out)
	}
}
