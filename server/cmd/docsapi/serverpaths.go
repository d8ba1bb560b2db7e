package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// This file keeps the server's own files out of every agent sandbox: serve
// refuses, at start, a sandbox entry that shows any of them (serverPaths,
// checkSandboxPaths). A sandbox shows a host path as the kernel finds it at
// each run, through every link, so the check compares paths with their
// links followed, dangling ones too (a link to a folder that does not exist
// yet leads there once it does), and the files themselves, so that a bind
// mount of a server folder elsewhere is seen as the same folder.

// serverPath is a file or folder of the server that no sandbox may show.
type serverPath struct {
	path string // absolute and clean, as configured (links not followed)
	what string // what it is, for messages: "the data folder"
	key  string // the setting that names it: "tls.cert", "--data"
}

// serverPaths returns every file and folder the server keeps its data,
// configuration and secrets in: what an agent must never read. Every path
// serve reads or writes for itself belongs here, so that a new one is kept
// out of the sandboxes by adding it to this list.
func (set *serveSettings) serverPaths(getenv func(string) string) []serverPath {
	var out []serverPath
	add := func(path, what, key string) {
		if path == "" {
			return
		}
		if abs, err := filepath.Abs(path); err == nil {
			out = append(out, serverPath{path: abs, what: what, key: key})
		}
	}

	// The storage: the SQLite data folder and its files (the database may
	// be a link elsewhere, and SQLite keeps its journal beside its target).
	if set.storage.database == "" {
		from := set.storage.from
		switch from {
		case "the configuration file's data":
			from = "data"
		case "default":
			from = "data, not set: the default folder"
		}
		add(set.storage.dataDir, "the data folder", from)
		db := filepath.Join(set.storage.dataDir, dbFileName)
		add(db, "the SQLite database", from)
		if real := resolvePath(db); real != db {
			for _, suffix := range []string{"-wal", "-shm", "-journal"} {
				add(real+suffix, "the SQLite database's files", from)
			}
		}
	}
	add(set.configPath, "the configuration file", "--config or DOCSAPI_CONFIG")
	setting := func(name, flag string) string {
		if set.sources[name] == "--"+flag {
			return "--" + flag
		}
		return name
	}
	add(set.tlsCert, "the TLS certificate", setting("tls.cert", "tls-cert"))
	add(set.tlsKey, "the TLS private key", setting("tls.key", "tls-key"))

	// Secret files: the server's own secret (sessions, cursors), and those
	// the configuration names.
	add(set.secretFile, "the server's secret file", setting("secretFile", "secret-file"))
	for i, p := range set.file.Projects {
		where := projectWhere(i, p)
		add(p.Host.TokenFile, "a host token file", where+".host.tokenFile")
		add(p.Agent.APIKeyFile, "an API key file", where+".agent.apiKeyFile")
		if p.Assistant != nil {
			add(p.Assistant.APIKeyFile, "an API key file", where+".assistant.apiKeyFile")
		}
	}
	for _, kv := range set.file.Git.Env {
		name, value, _ := strings.Cut(kv, "=")
		for _, f := range gitEnvFiles(name, value) {
			add(f, "a file git's environment names", "git.env "+name)
		}
	}

	// Where git and the agents work: every job's workspace, the
	// repositories' mirrors, and the command agents' run folders (their
	// homes and proxy sockets), which the runner makes there too.
	if set.file.Git.WorkDir != "" {
		add(set.file.Git.WorkDir, "the git work folder", "git.workDir, which holds the workspaces, mirrors and agents' runs")
	} else {
		add(os.TempDir(), "the git work folder", "git.workDir is not set, so the workspaces, mirrors and agents' runs are made in the system's temporary folder; set it to a folder of their own")
	}

	// Secrets of the server's user that git and the PostgreSQL client
	// read by themselves: SSH keys, PostgreSQL's password and key files.
	homes := []string{getenv("HOME")}
	if u, err := user.Current(); err == nil && u.HomeDir != homes[0] {
		homes = append(homes, u.HomeDir)
	}
	for _, home := range homes {
		if !filepath.IsAbs(home) {
			continue
		}
		add(filepath.Join(home, ".ssh"), "the SSH folder of the server's user", "the server's home")
		add(filepath.Join(home, ".pgpass"), "PostgreSQL's password file", "the server's home")
		add(filepath.Join(home, ".pg_service.conf"), "PostgreSQL's service file", "the server's home")
		add(filepath.Join(home, ".postgresql"), "PostgreSQL's key folder", "the server's home")
	}
	for _, name := range []string{"PGPASSFILE", "PGSERVICEFILE", "PGSSLKEY"} {
		if v := getenv(name); filepath.IsAbs(v) {
			add(v, "a PostgreSQL secret file", "the environment's "+name)
		}
	}
	if u, err := url.Parse(set.storage.database); err == nil && set.storage.database != "" {
		for _, param := range []string{"passfile", "sslkey"} {
			if v := u.Query().Get(param); filepath.IsAbs(v) {
				add(v, "a PostgreSQL secret file", "the database URL's "+param)
			}
		}
	}
	return out
}

// gitEnvFiles returns the files a git.env variable names that may hold a
// secret: git's TLS client certificate and key, and the absolute paths in
// an SSH command (an identity file, a known-hosts or configuration file).
func gitEnvFiles(name, value string) []string {
	switch strings.ToUpper(name) {
	case "GIT_SSL_KEY", "GIT_SSL_CERT":
		return []string{value}
	case "GIT_SSH_COMMAND", "GIT_SSH":
		var files []string
		for _, word := range strings.Fields(value) {
			// -i/key, -oIdentityFile=/key, IdentityFile=/key.
			if i := strings.LastIndexAny(word, "="); i >= 0 {
				word = word[i+1:]
			}
			word = strings.Trim(word, `"'`)
			if filepath.IsAbs(word) {
				files = append(files, word)
			}
		}
		return files
	}
	return nil
}

// projectWhere names a project in messages, as resolveProjects does.
func projectWhere(i int, p projectConfig) string {
	where := fmt.Sprintf("projects[%d]", i)
	if p.ID != "" {
		where += fmt.Sprintf(" (%q)", p.ID)
	}
	return where
}

// checkSandboxPaths refuses a sandbox entry of the configuration (a
// command agent's sandbox.readOnly) that holds one of the server's paths
// or lies in one.
func checkSandboxPaths(set *serveSettings, getenv func(string) string) error {
	var paths []serverPath
	for i, p := range set.file.Projects {
		if p.Agent.Sandbox.Off {
			continue
		}
		for j, entry := range p.Agent.Sandbox.ReadOnly {
			if !filepath.IsAbs(entry) {
				continue // the sandbox refuses it, saying so
			}
			if paths == nil {
				paths = set.serverPaths(getenv)
			}
			key := fmt.Sprintf("%s.agent.sandbox.readOnly[%d]", projectWhere(i, p), j)
			if err := checkEntry(key, filepath.Clean(entry), paths); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkEntry refuses entry, a host path a sandbox would show, if it
// overlaps one of paths: holds it, lies in it, or is it, as written, with
// its links followed, or as the same file found at two paths.
func checkEntry(key, entry string, paths []serverPath) error {
	real := resolvePath(entry)
	for _, s := range paths {
		sReal := resolvePath(s.path)
		relation := overlap([]string{entry, real}, []string{s.path, sReal})
		if relation == "" {
			continue
		}
		return fmt.Errorf("%s: %q%s %s %s %s%s (%s): the agent would read the server's own files; name only folders that hold what the agent's program needs",
			key, entry, linkNote(entry, real), relation, s.what, s.path, linkNote(s.path, sReal), s.key)
	}
	return nil
}

// overlap says how the path of an entry relates to a server path, each
// given in its spellings (as written, links followed): "is", "lies in",
// "holds", or "" if they do not overlap.
func overlap(entry, server []string) string {
	for _, rel := range []struct {
		name string
		test func(e, s string) bool
	}{
		{"is", func(e, s string) bool { return e == s }},
		{"lies in", within},
		{"holds", func(e, s string) bool { return within(s, e) }},
		{"lies in", sameFileWithin},
		{"holds", func(e, s string) bool { return sameFileWithin(s, e) }},
	} {
		for _, e := range entry {
			for _, s := range server {
				if rel.test(e, s) {
					return rel.name
				}
			}
		}
	}
	return ""
}

// linkNote says where path leads when a link makes it lead elsewhere.
func linkNote(path, real string) string {
	if path == real {
		return ""
	}
	return " (through links: " + real + ")"
}

// within reports whether path is root or lies under it; both are clean and
// absolute.
func within(path, root string) bool {
	if root == "/" {
		return true
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

// sameFileWithin reports whether path, or a folder it lies in, is the file
// at root, found at another path (a bind mount, or a hard link to a file):
// what the path comparison cannot see. Paths that do not exist are in
// nothing.
func sameFileWithin(path, root string) bool {
	target, err := os.Stat(root)
	if err != nil {
		return false
	}
	for p := path; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && os.SameFile(fi, target) {
			return true
		}
		if p == "/" {
			return false
		}
	}
}

// maxLinks bounds the links resolvePath follows, as the kernel bounds a
// path's (40 on Linux): a loop of links ends there.
const maxLinks = 40

// resolvePath returns path, absolute and clean, with every symbolic link in
// it followed, as far as the file system goes: a link is followed whether
// or not its target exists (a dangling link still says where it will lead
// once the target is made), and what follows the first component that does
// not exist is kept as written. A component it cannot look at (no
// permission, a loop of links) ends the resolution there too: the server
// could not show what lies beyond it either.
func resolvePath(path string) string {
	done := "/"
	rest := strings.Split(filepath.Clean(path), "/")
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 && links >= maxLinks {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		links++
		if filepath.IsAbs(target) {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return done
}
