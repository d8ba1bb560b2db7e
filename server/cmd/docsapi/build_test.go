package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The tests that drive the built binary share one build: linking it takes
// seconds, and the binary is the same for each.
var built struct {
	once sync.Once
	dir  string // removed by TestMain
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildDocsapi returns the command, built once for all the tests that ask.
func buildDocsapi(ctx context.Context, t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not in PATH")
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "docsapi-test-build-"); built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "docsapi")
		if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}
