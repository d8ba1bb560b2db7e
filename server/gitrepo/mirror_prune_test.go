package gitrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/rundir"
)

// plantMirror makes, in r's mirror folder, a mirror of name (hashed as
// mirrorOf does) last fetched into at used: a folder with a manifest of
// that time, and its lock file. withManifest false leaves the manifest
// out, as a making cut short would, and gives the folder that time.
func plantMirror(t *testing.T, r *Repositories, name string, used time.Time, withManifest bool) string {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	base := filepath.Join(r.cfg.Dir, MirrorFolder, hex.EncodeToString(sum[:]))
	dir := base + ".git"
	writeFile(t, filepath.Join(dir, "objects", "pack", "pack-x.pack"), "pack")
	writeFile(t, base+".lock", "")
	if withManifest {
		writeFile(t, filepath.Join(dir, manifestName), manifestHeader+"\n")
		touch(t, filepath.Join(dir, manifestName), used)
	}
	touch(t, dir, used)
	return dir
}

func touch(t *testing.T, path string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// The mirrors no job fetched into for MirrorIdle are removed, their lock
// files kept; a mirror in use, a recent one, and whatever in the folder is
// not a mirror (a link named as one, a file, another name) are left.
func TestPruneMirrorsRemovesOnlyIdleMirrors(t *testing.T) {
	t.Parallel()
	r, _ := newRepos(t, Config{})
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	idle := 30 * 24 * time.Hour
	old := now.Add(-idle - time.Hour)

	stale := plantMirror(t, r, "https://example.com/gone.git", old, true)
	unfinished := plantMirror(t, r, "https://example.com/cut-short.git", old, false)
	recent := plantMirror(t, r, "https://example.com/docs.git", now.Add(-time.Hour), true)
	// The folder is old but a fetch wrote the manifest lately.
	refreshed := plantMirror(t, r, "https://example.com/refreshed.git", now.Add(-time.Minute), true)
	touch(t, refreshed, old)
	busy := plantMirror(t, r, "https://example.com/busy.git", old, true)
	lock, err := rundir.Acquire(context.Background(), strings.TrimSuffix(busy, ".git")+".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	folder := filepath.Join(r.cfg.Dir, MirrorFolder)
	// A link named as a mirror, to a folder outside that must survive.
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "keep"), "keep")
	sum := sha256.Sum256([]byte("link"))
	link := filepath.Join(folder, hex.EncodeToString(sum[:])+".git")
	symlink(t, outside, link)
	// A file named as a mirror, and a folder of another name.
	sum = sha256.Sum256([]byte("file"))
	file := filepath.Join(folder, hex.EncodeToString(sum[:])+".git")
	writeFile(t, file, "not a mirror")
	other := filepath.Join(folder, "notes.git")
	writeFile(t, filepath.Join(other, manifestName), "")
	for _, p := range []string{file, other, filepath.Join(other, manifestName)} {
		touch(t, p, old)
	}

	removed, err := r.pruneMirrors(now, idle)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{stale, unfinished}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Fatalf("removed %q, want %q", removed, want)
	}
	for _, p := range want {
		if exists(p) {
			t.Errorf("%s is still there", p)
		}
		if !exists(strings.TrimSuffix(p, ".git") + ".lock") {
			t.Errorf("the lock of %s was removed", p)
		}
	}
	for _, p := range []string{recent, refreshed, busy, link, file, other, filepath.Join(outside, "keep")} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
}

// After a fetch, the mirrors are pruned at most once a day, whichever
// process fetched: the mark in the mirror folder says when they last were.
// A job whose mirror was pruned fetches it anew.
func TestFetchPrunesIdleMirrorsOnceADay(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	oldTimes := time.Now().Add(-DefaultMirrorIdle - time.Hour)
	first := plantMirror(t, f.r, "https://example.com/first.git", oldTimes, true)
	f.job(t, "job-1")
	if exists(first) {
		t.Fatal("an idle mirror survived the first fetch")
	}
	if !exists(f.m.dir) {
		t.Fatal("the mirror just fetched into was removed")
	}

	// Within the day, another idle mirror waits for the next prune.
	second := plantMirror(t, f.r, "https://example.com/second.git", oldTimes, true)
	f.job(t, "job-2")
	if !exists(second) {
		t.Fatal("the mirrors were pruned twice within a day")
	}
	// A day later (the mark made older), it goes.
	touch(t, filepath.Join(f.r.cfg.Dir, MirrorFolder, pruneMarker), time.Now().Add(-pruneEvery-time.Minute))
	f.job(t, "job-3")
	if exists(second) {
		t.Fatal("an idle mirror survived the next day's fetch")
	}

	// This repository's own mirror, idle for the limit, goes at another
	// repository's fetch; its next job makes it anew.
	touch(t, filepath.Join(f.m.dir, manifestName), oldTimes)
	touch(t, filepath.Join(f.r.cfg.Dir, MirrorFolder, pruneMarker), time.Now().Add(-pruneEvery-time.Minute))
	g := &mirrorFixture{remote: newRemote(t, "", "other.git"), r: f.r, logs: f.logs}
	g.url = "file://" + g.remote
	g.m = g.r.mirrorOf(g.url)
	g.job(t, "job-4")
	if exists(f.m.dir) {
		t.Fatal("the first repository's idle mirror survived")
	}
	assertWorkspaceIs(t, f.open(t, "job-5"), f.remote)
	if !exists(f.m.dir) {
		t.Fatal("the next job did not make the mirror anew")
	}
}

// A negative MirrorIdle keeps every mirror.
func TestMirrorIdleNegativeKeepsMirrors(t *testing.T) {
	t.Parallel()
	f := newMirrorFixture(t)
	f.r, _ = newRepos(t, Config{MirrorIdle: -1})
	f.m = f.r.mirrorOf(f.url)
	stale := plantMirror(t, f.r, "https://example.com/gone.git", time.Now().Add(-10*DefaultMirrorIdle), true)
	f.job(t, "job-1")
	if !exists(stale) {
		t.Fatal("a mirror was pruned with MirrorIdle negative")
	}
}
