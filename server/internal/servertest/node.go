package servertest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Clients no one here wrote, run on Node.js: a folder of the tests with a
// package.json and a committed package-lock.json, whose packages `npm ci`
// installs (.ci/test-env.sh does, with Debian's nodejs and npm where no
// node is installed). A test skips only where node or the packages are
// missing, and .ci/test-env.sh sets DOCSAPI_TEST_NODE=required wherever
// it installed them, which makes a skip a failure.

// FindNode returns the node program, once the packages the lock file in
// dir pins are installed in dir's node_modules at the versions it pins;
// otherwise it skips the test (fails it when DOCSAPI_TEST_NODE=required).
// DOCSAPI_TEST_NODE_PATH names a node that is not on PATH.
func FindNode(t testing.TB, dir string) string {
	t.Helper()
	node := os.Getenv("DOCSAPI_TEST_NODE_PATH")
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			skipNode(t, "no node on PATH, and DOCSAPI_TEST_NODE_PATH is not set")
		}
	}
	if missing := notInstalled(dir); missing != "" {
		skipNode(t, fmt.Sprintf("%s: run npm ci in %s", missing, dir))
	}
	return node
}

func skipNode(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("DOCSAPI_TEST_NODE") == "required" {
		t.Fatal(msg + " (DOCSAPI_TEST_NODE=required)")
	}
	t.Skip(msg)
}

// notInstalled says which package of dir's package-lock.json is missing
// from dir's node_modules or there at another version, or returns "". A
// stale node_modules would test packages the lock no longer names. The
// files are read here, by the test, so that go test's cache also keys the
// test's result on them.
func notInstalled(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err.Error()
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return fmt.Sprintf("package-lock.json: %v", err)
	}
	paths := make([]string, 0, len(lock.Packages))
	for p := range lock.Packages {
		if strings.HasPrefix(p, "node_modules/") {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return "package-lock.json names no package"
	}
	sort.Strings(paths)
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p), "package.json"))
		if err != nil {
			return p + " is not installed"
		}
		var installed struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &installed); err != nil {
			return fmt.Sprintf("%s/package.json: %v", p, err)
		}
		if want := lock.Packages[p].Version; installed.Version != want {
			return fmt.Sprintf("%s is at %s, the lock pins %s", p, installed.Version, want)
		}
	}
	return ""
}
