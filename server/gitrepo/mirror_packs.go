package gitrepo

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A mirror is trusted only as far as cheap checks vouch for it, made under
// its lock before every fetch; what fails them is rebuilt from the remote.
// The record of a good mirror is its manifest, written after each fetch:
// the packs it holds and their sizes. Git adds packs whole (written aside,
// then renamed) and moves refs only after, so a fetch killed halfway (kill
// -9, power loss) leaves at worst files that no ref needs: temporary packs,
// lock files, a finished pack with no ref to it yet. A pack that has gone,
// shrunk, or whose last bytes no longer match its index (a truncated
// write, a damaged disk) means the mirror can no longer be read whole, and
// is rebuilt. Refs are not checked here: the fetch moves every ref the job
// reads, and one that is broken (a missing object, garbage) fails the
// fetch, after which git fsck decides (see sync).
//
// Git on the mirror dies with the server where the kernel can kill it
// (Linux; see setProcessGroup), so no fetch goes on moving refs once its
// lock is gone. Elsewhere one may, and what it adds (a whole pack, a ref
// to it, leftovers the next check removes) is what any fetch adds.

// manifestName is the file in a mirror listing the packs of its last good
// state, one "name size-of-.pack size-of-.idx" a line after a header.
const manifestName = "docsapi-mirror"

// manifestHeader begins the manifest; another version is rebuilt.
const manifestHeader = "docsapi mirror 1"

// maxMirrorPacks is how many packs a mirror may hold before its smaller
// ones are rolled into one: each job's fetch adds one, and every pack is
// another file for each workspace to link and for git to look through.
var maxMirrorPacks = 16

// hashSize is the length of an object id in a mirror, which is SHA-1.
const hashSize = 20

// packFile is a pack of the mirror: its name (pack-<hex>) and the sizes of
// its .pack and .idx.
type packFile struct {
	name      string
	pack, idx int64
}

func (p packFile) String() string { return fmt.Sprintf("%s %d %d", p.name, p.pack, p.idx) }

// check says what is wrong with the mirror, "" if nothing, and removes
// what a killed git left behind: temporary packs, .keep files and lock
// files, which only a git command still running would need, and none runs
// on the mirror without its lock.
func (m *mirror) check() string {
	fi, err := os.Lstat(m.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "there is none yet"
	case err != nil:
		return err.Error()
	case !fi.IsDir():
		return "it is not a folder"
	}
	want, err := readManifest(m.dir)
	if err != nil {
		return err.Error()
	}
	for _, name := range redirectFiles {
		if _, err := os.Lstat(filepath.Join(m.dir, name)); !errors.Is(err, fs.ErrNotExist) {
			return "it holds " + filepath.ToSlash(name) + ", which would make git read another repository"
		}
	}
	m.removeLeftovers()
	have, err := m.packs()
	if err != nil {
		return err.Error()
	}
	for _, p := range want {
		i := slices.IndexFunc(have, func(h packFile) bool { return h.name == p.name })
		switch {
		case i < 0:
			return "the pack " + p.name + " is missing or damaged"
		case have[i] != p:
			return fmt.Sprintf("the pack %s changed size (%d and %d bytes, was %d and %d)", p.name, have[i].pack, have[i].idx, p.pack, p.idx)
		}
	}
	return ""
}

// removeLeftovers removes what git commands killed on the mirror left: they
// are never needed once no git runs on it, and a stale lock file would fail
// every later fetch.
func (m *mirror) removeLeftovers() {
	var stale []string
	add := func(pattern string) {
		matches, _ := filepath.Glob(filepath.Join(m.dir, pattern))
		stale = append(stale, matches...)
	}
	add("*.lock") // packed-refs.lock, HEAD.lock, config.lock, shallow.lock
	add(filepath.Join("objects", "pack", "tmp_*"))
	add(filepath.Join("objects", "pack", "*.keep"))
	_ = filepath.WalkDir(filepath.Join(m.dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			stale = append(stale, p)
		}
		return nil
	})
	for _, p := range stale {
		if err := os.Remove(p); err == nil {
			m.repos.cfg.Logger.Info("gitrepo: removed what a killed git left in the mirror", slog.String("path", p))
		}
	}
}

// packs lists the mirror's whole packs, and removes the files of those
// that are not: a .pack without its .idx, or the reverse, is what git
// leaves between renaming one and the other; one whose .pack does not end
// as its .idx says is damaged. Either way no ref needs it, or the manifest
// names it and check finds it missing.
func (m *mirror) packs() ([]packFile, error) {
	dir := filepath.Join(m.dir, "objects", "pack")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, e := range entries {
		if base, ok := strings.CutSuffix(e.Name(), ".pack"); ok && strings.HasPrefix(base, "pack-") {
			names[base] = true
		}
		if base, ok := strings.CutSuffix(e.Name(), ".idx"); ok && strings.HasPrefix(base, "pack-") {
			names[base] = true
		}
	}
	var packs []packFile
	for name := range names {
		p, err := checkPack(filepath.Join(dir, name))
		if err != nil {
			m.repos.cfg.Logger.Warn("gitrepo: removing a pack of the mirror that is not whole",
				slog.String("path", filepath.Join(dir, name)), slog.Any("error", err))
			for _, ext := range []string{".pack", ".idx", ".rev"} {
				_ = os.Remove(filepath.Join(dir, name+ext))
			}
			continue
		}
		packs = append(packs, p)
	}
	slices.SortFunc(packs, func(a, b packFile) int { return strings.Compare(a.name, b.name) })
	return packs, nil
}

// checkPack reads the ends of the pack at base (its path without .pack or
// .idx), as git does when it opens one: a .pack that starts as a pack and
// ends with the checksum its .idx records, and as many objects in both.
// Reading every object would cost as much as the history.
func checkPack(base string) (packFile, error) {
	p := packFile{name: filepath.Base(base)}
	pack, err := readEnds(base+".pack", 12, hashSize)
	if err != nil {
		return p, err
	}
	idx, err := readEnds(base+".idx", 8+256*4, 2*hashSize)
	if err != nil {
		return p, err
	}
	p.pack, p.idx = pack.size, idx.size
	switch {
	case !bytes.Equal(pack.head[:4], []byte("PACK")):
		return p, errors.New("the .pack does not begin as a pack")
	case !bytes.Equal(idx.head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}):
		return p, errors.New("the .idx is not a version 2 index")
	case !bytes.Equal(pack.tail, idx.tail[:hashSize]):
		return p, errors.New("the .pack does not end with the checksum its .idx records")
	case binary.BigEndian.Uint32(pack.head[8:12]) != binary.BigEndian.Uint32(idx.head[8+255*4:]):
		return p, errors.New("the .pack and .idx count different numbers of objects")
	}
	return p, nil
}

// fileEnds are the first and last bytes of a file, and its size.
type fileEnds struct {
	head, tail []byte
	size       int64
}

// readEnds reads the first head and last tail bytes of the regular file
// at path.
func readEnds(path string, head, tail int) (fileEnds, error) {
	var e fileEnds
	// Lstat: a link would be linked into the workspace as a link.
	fi, err := os.Lstat(path)
	if err != nil {
		return e, err
	}
	e.size = fi.Size()
	if !fi.Mode().IsRegular() || e.size < int64(head+tail) {
		return e, fmt.Errorf("%s is not a file of at least %d bytes", filepath.Base(path), head+tail)
	}
	f, err := os.Open(path)
	if err != nil {
		return e, err
	}
	defer f.Close()
	e.head, e.tail = make([]byte, head), make([]byte, tail)
	if _, err := f.ReadAt(e.head, 0); err != nil {
		return e, err
	}
	if _, err := f.ReadAt(e.tail, e.size-int64(tail)); err != nil {
		return e, err
	}
	return e, nil
}

// record writes the manifest of the mirror as a fetch left it, rolling its
// smaller packs into one first if it holds too many, and returns its packs.
func (m *mirror) record(ctx context.Context, home string) ([]packFile, error) {
	packs, err := m.packs()
	if err != nil {
		return nil, fmt.Errorf("gitrepo: reading the mirror of %s: %w", m.shown, err)
	}
	if err := writeManifest(m.dir, packs); err != nil {
		return nil, err
	}
	roll := rollable(packs)
	if len(packs) <= maxMirrorPacks || len(roll) < 2 {
		return packs, nil
	}
	// The packs to roll go into a new one, whole (unreachable objects
	// too: a workspace may be using any of them). Not git repack -d,
	// which removes the old packs before this could write a manifest
	// without them: dying between the two would leave one that names
	// packs that are gone, and a needless rebuild. Here the manifest is
	// written first; dying before the old packs are removed leaves packs
	// it does not name, which are whole, and kept.
	var list strings.Builder
	for _, p := range roll {
		list.WriteString(p.name + ".pack\n")
	}
	spec := cmdSpec{step: "clone", dir: home, home: home, gitDir: m.dir, stdin: list.String()}
	out, err := m.repos.run(ctx, spec, "pack-objects", "--quiet", "--stdin-packs", filepath.Join(m.dir, "objects", "pack", "pack"))
	if err != nil {
		return nil, err
	}
	rolled, err := checkPack(filepath.Join(m.dir, "objects", "pack", "pack-"+strings.TrimSpace(out)))
	if err != nil {
		return nil, fmt.Errorf("gitrepo: the mirror of %s: the rolled-up pack: %w", m.shown, err)
	}
	kept := []packFile{rolled}
	for _, p := range packs {
		if !slices.Contains(roll, p) && p.name != rolled.name {
			kept = append(kept, p)
		}
	}
	if err := writeManifest(m.dir, kept); err != nil {
		return nil, err
	}
	for _, p := range roll {
		if p.name != rolled.name {
			for _, ext := range []string{".pack", ".idx", ".rev"} {
				_ = os.Remove(filepath.Join(m.dir, "objects", "pack", p.name+ext))
			}
		}
	}
	return kept, nil
}

// rollable chooses the packs to roll into one, as git repack
// --geometric=2 would: every pack from the largest down is kept while it
// holds at least twice what all smaller ones hold together; the first that
// does not is rolled, with all smaller ones. So a pack is rewritten only
// while the new ones add up to half of it, and the large pack of the first
// fetch never is: each job's fetch costs what it brought.
func rollable(packs []packFile) []packFile {
	bySize := slices.SortedFunc(slices.Values(packs), func(a, b packFile) int { return cmp.Compare(b.pack, a.pack) })
	var rest int64
	for _, p := range bySize {
		rest += p.pack
	}
	for i, p := range bySize {
		rest -= p.pack
		if p.pack < 2*rest {
			return bySize[i:]
		}
	}
	return nil
}

// readManifest reads the packs the manifest of the mirror at dir lists.
func readManifest(dir string) ([]packFile, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("it has no manifest: it was never finished, or was discarded")
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() || sc.Text() != manifestHeader {
		return nil, errors.New("its manifest is not one this server writes")
	}
	var packs []packFile
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var p packFile
		var err1, err2 error
		if len(f) == 3 {
			p.name = f[0]
			p.pack, err1 = strconv.ParseInt(f[1], 10, 64)
			p.idx, err2 = strconv.ParseInt(f[2], 10, 64)
		}
		if len(f) != 3 || err1 != nil || err2 != nil || !strings.HasPrefix(p.name, "pack-") || strings.ContainsAny(p.name, `/\`) {
			return nil, fmt.Errorf("its manifest has a line that is not a pack: %q", sc.Text())
		}
		packs = append(packs, p)
	}
	return packs, nil
}

// writeManifest replaces the manifest of the mirror at dir with one listing
// packs: written aside and renamed, so that it is whole or absent.
func writeManifest(dir string, packs []packFile) error {
	var b strings.Builder
	b.WriteString(manifestHeader + "\n")
	for _, p := range packs {
		b.WriteString(p.String() + "\n")
	}
	tmp, err := os.CreateTemp(dir, manifestName+".tmp-*")
	if err != nil {
		return fmt.Errorf("gitrepo: writing the mirror's manifest: %w", err)
	}
	_, err = tmp.WriteString(b.String())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, manifestName))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("gitrepo: writing the mirror's manifest: %w", err)
	}
	return nil
}

// link gives the workspace's pack folder objects the mirror's packs, as hard
// links; where the file system cannot (the mirror folder on another one),
// as copies, which cost what the history weighs.
func (m *mirror) link(packs []packFile, objects string) error {
	copied := false
	for _, p := range packs {
		for _, ext := range []string{".pack", ".idx"} {
			from := filepath.Join(m.dir, "objects", "pack", p.name+ext)
			to := filepath.Join(objects, p.name+ext)
			if os.Link(from, to) == nil {
				continue
			}
			if err := copyFile(from, to); err != nil {
				return fmt.Errorf("gitrepo: giving the workspace the mirror's objects: %w", err)
			}
			copied = true
		}
	}
	if copied {
		m.repos.cfg.Logger.Warn("gitrepo: the mirror's packs could not be linked, so they were copied: keep Config.Dir on one file system",
			slog.String("repository", m.shown))
	}
	return nil
}

// copyFile copies the file from to a new read-only file to.
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}
