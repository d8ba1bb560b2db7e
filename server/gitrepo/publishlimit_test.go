package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/engine"
)

// wantRefused checks that Publish refused permanently, saying each of
// want, and that the remote received nothing: no branch, or the branch
// still at tip ("" for none).
func wantRefused(t *testing.T, ws engine.Workspace, remote, branch, tip string, want ...string) {
	t.Helper()
	_, err := ws.Publish(context.Background(), "A docs change")
	if err == nil {
		t.Fatal("Publish succeeded; it should have refused")
	}
	if !engine.IsPermanent(err) || !strings.Contains(err.Error(), "gitrepo: publish refused: ") {
		t.Errorf("Publish = %v, want a permanent refusal", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Publish = %v, want it to say %q", err, w)
		}
	}
	if tip == "" {
		assertNoBranch(t, remote, branch)
	} else if got := gitT(t, remote, "rev-parse", "refs/heads/"+branch); got != tip {
		t.Errorf("the remote's %s moved from %s to %s", branch, tip, got)
	}
	if head := wsGit(t, ws.(*Workspace), "rev-parse", "HEAD"); tip != "" && head != tip {
		t.Errorf("the workspace committed: HEAD %s, want %s", head, tip)
	}
}

// writeMany writes n tiny files under dir, a hundred to a folder.
func writeMany(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.md", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The attack as found: one job pushed 20,003 files as a "docs change".
// Tiny files in new folders, each git's one entry: the default limit of
// 1,000 files refuses them, naming both numbers, and nothing is pushed.
func TestPublishRefusesTwentyThousandFiles(t *testing.T) {
	remote := newRemote(t, "", "remote.git")
	r, _ := newRepos(t, Config{})
	ws := open(t, r, engine.RepoSpec{Repository: remote, Ref: "main", Branch: "job-many"})
	writeMany(t, filepath.Join(ws.Dir(), "spam"), 20003)
	head := wsGit(t, ws, "rev-parse", "HEAD")
	wantRefused(t, ws, remote, "job-many", "", "the branch would change 20003 files", "at most 1000", "nothing was committed or pushed")
	if got := wsGit(t, ws, "rev-parse", "HEAD"); got != head {
		t.Errorf("the workspace committed: HEAD moved from %s to %s", head, got)
	}
}

// One file of many megabytes: the limit on bytes refuses it (lowered here,
// so that the test writes 3 MiB rather than 210 MB).
func TestPublishRefusesAHugeFile(t *testing.T) {
	remote := newRemote(t, "", "remote.git")
	r, _ := newRepos(t, Config{MaxPublishBytes: 2 << 20})
	ws := open(t, r, engine.RepoSpec{Repository: remote, Ref: "main", Branch: "job-huge"})
	writeFile(t, filepath.Join(ws.Dir(), "docs", "video.md"), strings.Repeat("0123456789abcdef", 3<<16))
	wantRefused(t, ws, remote, "job-huge", "", "the branch would add or change 3145728 bytes of files (3 MiB", "at most 2097152 bytes (2 MiB)")
}

// What counts, measured against the base as the pull request shows it,
// whatever the agent did to hide it.
func TestPublishLimitsCountWhatTheBranchProposes(t *testing.T) {
	const maxFiles, maxBytes = 3, 1000
	for _, tc := range []struct {
		name   string
		edit   func(t *testing.T, dir string)
		refuse string // "" when published
	}{
		{"at the limit", func(t *testing.T, dir string) {
			for i := range 3 {
				writeFile(t, filepath.Join(dir, fmt.Sprintf("p%d.md", i)), "x\n")
			}
		}, ""},
		{"in new folders", func(t *testing.T, dir string) {
			for i := range 4 {
				writeFile(t, filepath.Join(dir, "a", "b", fmt.Sprintf("c%d", i), "page.md"), "x\n")
			}
		}, "would change 4 files"},
		{"a deleted tree", func(t *testing.T, dir string) {
			// docs/guide.md, docs/api/ref.md, old.txt, README.md: four
			// files, in one folder and beside it.
			for _, p := range []string{"docs", "old.txt", "README.md"} {
				if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
					t.Fatal(err)
				}
			}
		}, "would change 4 files"},
		{"modes and kinds count as changes", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "README.md"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "old.txt")); err != nil {
				t.Fatal(err)
			}
			symlink(t, "README.md", filepath.Join(dir, "old.txt"))
			writeFile(t, filepath.Join(dir, "docs", "guide.md"), "changed\n")
			writeFile(t, filepath.Join(dir, "new.md"), "new\n")
		}, "would change 4 files"},
		{"many bytes in tiny files", func(t *testing.T, dir string) {
			for i := range 3 {
				writeFile(t, filepath.Join(dir, fmt.Sprintf("p%d.md", i)), strings.Repeat("y", 334))
			}
		}, "would add or change 1002 bytes"},
		{"the same contents in several files count each time", func(t *testing.T, dir string) {
			for i := range 2 {
				writeFile(t, filepath.Join(dir, fmt.Sprintf("p%d.md", i)), strings.Repeat("z", 501))
			}
		}, "would add or change 1002 bytes"},
		{"a link counts its target's name, not its target", func(t *testing.T, dir string) {
			// big.bin stays out of the commit (ignored); the link to it
			// is seven bytes.
			writeFile(t, filepath.Join(dir, ".gitignore"), "*.bin\n")
			writeFile(t, filepath.Join(dir, "big.bin"), strings.Repeat("b", 5000))
			symlink(t, "big.bin", filepath.Join(dir, "big.md"))
		}, ""},
		{"a file shrunk counts its new size", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "docs", "guide.md"), "short\n")
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := newRemote(t, "", "remote.git")
			r, _ := newRepos(t, Config{MaxPublishFiles: maxFiles, MaxPublishBytes: maxBytes})
			ws := open(t, r, engine.RepoSpec{Repository: remote, Ref: "main", Branch: "job"})
			tc.edit(t, ws.Dir())
			if tc.refuse == "" {
				publish(t, ws, true)
				return
			}
			wantRefused(t, ws, remote, "job", "", tc.refuse)
		})
	}
}

// Follow-ups cannot publish a little at a time past the limit: each run is
// measured with what the branch holds already, against its base. And a
// follow-up that undoes earlier files makes room again.
func TestPublishLimitsSpanTheJobsRuns(t *testing.T) {
	remote := newRemote(t, "", "remote.git")
	r, _ := newRepos(t, Config{MaxPublishFiles: 3})
	spec := engine.RepoSpec{Repository: remote, Ref: "main", Branch: "job-runs"}

	ws := open(t, r, spec)
	writeFile(t, filepath.Join(ws.Dir(), "a.md"), "a\n")
	writeFile(t, filepath.Join(ws.Dir(), "b.md"), "b\n")
	publish(t, ws, true)
	ws.Close()
	tip := gitT(t, remote, "rev-parse", "refs/heads/job-runs")

	ws = open(t, r, spec)
	writeFile(t, filepath.Join(ws.Dir(), "c.md"), "c\n")
	writeFile(t, filepath.Join(ws.Dir(), "d.md"), "d\n")
	wantRefused(t, ws, remote, "job-runs", tip, "would change 4 files", "at most 3")
	ws.Close()

	ws = open(t, r, spec)
	for _, p := range []string{"a.md", "b.md"} {
		if err := os.Remove(filepath.Join(ws.Dir(), p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"c.md", "d.md", "e.md"} {
		writeFile(t, filepath.Join(ws.Dir(), p), p+"\n")
	}
	publish(t, ws, true)
}

func TestNewRefusesNegativePublishLimits(t *testing.T) {
	for _, cfg := range []Config{{MaxPublishFiles: -1}, {MaxPublishBytes: -1}} {
		cfg.Dir = t.TempDir()
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("New(%+v) = %v, want a refusal of the negative limit", cfg, err)
		}
	}
}

// The tally reads git's output in whatever pieces it arrives, keeps no
// more ids than asked however long the output, and refuses output that is
// not git's.
func TestRawTally(t *testing.T) {
	zero := strings.Repeat("0", 40)
	id := func(i int) string { return fmt.Sprintf("%040x", i+1) }
	var out strings.Builder
	for i := range 50 {
		fmt.Fprintf(&out, ":000000 100644 %s %s A\x00dir/new %d\x00", zero, id(i), i)
	}
	fmt.Fprintf(&out, ":100644 000000 %s %s D\x00gone\x00", id(100), zero)          // no bytes
	fmt.Fprintf(&out, ":100644 100755 %s %s M\x00exec\x00", id(101), id(101))       // mode only
	fmt.Fprintf(&out, ":160000 160000 %s %s M\x00sub\x00", id(102), id(103))        // a gitlink
	fmt.Fprintf(&out, ":100644 100644 %s %s C90\x00from\x00to\x00", id(104), id(0)) // two paths
	raw := out.String()
	for _, chunk := range []int{1, 7, 64, len(raw)} {
		tally := &rawTally{keep: 10}
		for s := raw; len(s) > 0; {
			n := min(chunk, len(s))
			if _, err := tally.Write([]byte(s[:n])); err != nil {
				t.Fatalf("chunks of %d: %v", chunk, err)
			}
			s = s[n:]
		}
		if err := tally.finish(); err != nil {
			t.Fatalf("chunks of %d: %v", chunk, err)
		}
		if tally.files != 54 || len(tally.blobs) != 10 {
			t.Errorf("chunks of %d: %d files, %d ids kept; want 54 and 10", chunk, tally.files, len(tally.blobs))
		}
	}
	all := &rawTally{keep: 1000}
	all.Write([]byte(raw))
	if all.finish() != nil || all.files != 54 || len(all.blobs) != 50 || all.blobs[id(0)] != 2 {
		t.Errorf("all kept: %d files, %d ids, %d files of id 0; want 54, 50, 2", all.files, len(all.blobs), all.blobs[id(0)])
	}
	for name, bad := range map[string]string{
		"not a record":    "hello\x00",
		"short metadata":  ":100644 A\x00p\x00",
		"cut in a record": ":000000 100644 " + zero + " " + id(0) + " A\x00",
		"cut in a field":  ":000000 100644",
	} {
		tally := &rawTally{keep: 10}
		_, err := tally.Write([]byte(bad))
		if err == nil {
			err = tally.finish()
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
