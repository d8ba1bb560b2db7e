//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxRefusesARepointedReadOnlyLink: a ReadOnly path that is a link
// is shown as what it leads to at each run; once it leads elsewhere than
// when the server started (and checked it against its own files), runs are
// refused, and the secret the link now leads to is never shown.
func TestSandboxRefusesARepointedReadOnlyLink(t *testing.T) {
	root := t.TempDir()
	tools, secret := filepath.Join(root, "tools"), filepath.Join(root, "secret")
	for _, d := range []string{tools, secret} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, filepath.Join(tools, "tool.txt"), "a tool\n")
	writeTestFile(t, filepath.Join(secret, "tool.txt"), "the server's secret\n")
	link := filepath.Join(root, "current")
	if err := os.Symlink(tools, link); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, Config{ReadOnly: []string{link}})
	if out, code, _ := run(t, s, "cat "+link+"/tool.txt"); code != 0 || out != "a tool\n" {
		t.Fatalf("through the link at start: %q (status %d)", out, code)
	}

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	dir, home, private := folders(t)
	_, err := s.Command(context.Background(), Run{Program: "/bin/cat", Args: []string{link + "/tool.txt"}, Dir: dir, Home: home, Private: private})
	if err == nil || !strings.Contains(err.Error(), "now leads to "+secret) {
		t.Errorf("Command after the link was changed = %v, want it refused", err)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
