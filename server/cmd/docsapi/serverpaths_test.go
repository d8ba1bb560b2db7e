package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serverLayout is a server's files, each kind in a folder of its own
// under root, so that a folder holding one holds no other.
type serverLayout struct {
	root                             string
	data, config, cert, key          string
	token, apiKey, work, ssh, sshKey string
	pgpass, secret                   string
	home                             string
	links                            string // a folder for the tests' links
	tools                            string // a runtime folder, the server's nothing
}

func newServerLayout(t *testing.T) serverLayout {
	t.Helper()
	root := t.TempDir()
	l := serverLayout{
		root:   root,
		data:   filepath.Join(root, "data", "docsapi"),
		config: filepath.Join(root, "conf", "docsapi.json"),
		cert:   filepath.Join(root, "cert", "cert.pem"),
		key:    filepath.Join(root, "tlskey", "key.pem"),
		token:  filepath.Join(root, "token", "gitlab.token"),
		apiKey: filepath.Join(root, "apikey", "llm.key"),
		work:   filepath.Join(root, "work", "runs"),
		home:   filepath.Join(root, "home"),
		sshKey: filepath.Join(root, "deploy", "id_ed25519"),
		pgpass: filepath.Join(root, "pg", "pgpass"),
		secret: filepath.Join(root, "secret", "secret.key"),
		links:  filepath.Join(root, "links"),
		tools:  filepath.Join(root, "opt", "node"),
	}
	l.ssh = filepath.Join(l.home, ".ssh")
	for _, d := range []string{l.data, l.work, l.ssh, l.links, l.tools, filepath.Join(l.tools, "bin")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(l.data, dbFileName), l.config, l.cert, l.key, l.token, l.apiKey, l.sshKey, l.pgpass} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, f, "secret-value\n")
	}
	if err := os.MkdirAll(filepath.Dir(l.secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.secret, make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

// writeConfig writes the configuration of l, with the command agent's
// sandbox.readOnly entries given.
func (l serverLayout) writeConfig(t *testing.T, readOnly ...string) {
	t.Helper()
	ro, err := json.Marshal(readOnly)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, l.config, `{
  "data": "`+l.data+`",
  "secretFile": "`+l.secret+`",
  "tls": {"cert": "`+l.cert+`", "key": "`+l.key+`"},
  "git": {"workDir": "`+l.work+`", "env": ["GIT_SSH_COMMAND=ssh -i `+l.sshKey+` -o IdentitiesOnly=yes"]},
  "projects": [
    {"id": "p", "repository": "https://gitlab.example.com/a/b.git",
     "host": {"kind": "gitlab", "tokenFile": "`+l.token+`"},
     "agent": {"kind": "command", "command": "sh", "sandbox": {"readOnly": `+string(ro)+`}}},
    {"id": "q", "repository": "https://gitlab.example.com/a/c.git", "model": "m",
     "host": {"kind": "push-only"},
     "agent": {"kind": "llm", "provider": "anthropic", "apiKeyFile": "`+l.apiKey+`"}}
  ]
}`)
}

// check runs serve --print-config on l's configuration, which checks it
// whole.
func (l serverLayout) check(t *testing.T) result {
	t.Helper()
	return runCLI(t, map[string]string{"HOME": l.home, "PGPASSFILE": l.pgpass}, "", "serve", "--config", l.config, "--print-config")
}

// link makes a symbolic link in l.links to target and returns it.
func (l serverLayout) link(t *testing.T, name, target string) string {
	t.Helper()
	p := filepath.Join(l.links, name)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeRefusesSandboxOverServerPaths: a sandbox.readOnly entry that
// would show the agent one of the server's own files is refused at start,
// whether it names the path, a folder holding it, a folder in it, a link
// to any of these, a path through a link, or a dangling link that will
// lead into it; the error names the entry's key, both paths and the
// server path's setting.
func TestServeRefusesSandboxOverServerPaths(t *testing.T) {
	kinds := []struct {
		name    string
		path    func(l serverLayout) string
		key     string
		isDir   bool
		subject string
	}{
		{"data folder", func(l serverLayout) string { return l.data }, "(data)", true, "the data folder"},
		{"database", func(l serverLayout) string { return filepath.Join(l.data, dbFileName) }, "(data)", false, "the "},
		{"configuration file", func(l serverLayout) string { return l.config }, "--config", false, "the configuration file"},
		{"TLS certificate", func(l serverLayout) string { return l.cert }, "(tls.cert)", false, "the TLS certificate"},
		{"TLS key", func(l serverLayout) string { return l.key }, "(tls.key)", false, "the TLS private key"},
		{"host token file", func(l serverLayout) string { return l.token }, `projects[0] ("p").host.tokenFile`, false, "a host token file"},
		{"LLM API key file", func(l serverLayout) string { return l.apiKey }, `projects[1] ("q").agent.apiKeyFile`, false, "an API key file"},
		{"secret file", func(l serverLayout) string { return l.secret }, "(secretFile)", false, "the server's secret file"},
		{"git work folder", func(l serverLayout) string { return l.work }, "git.workDir", true, "the git work folder"},
		{"SSH folder", func(l serverLayout) string { return l.ssh }, "the server's home", true, "the SSH folder"},
		{"SSH key of git's command", func(l serverLayout) string { return l.sshKey }, "git.env GIT_SSH_COMMAND", false, "a file git's environment names"},
		{"PostgreSQL password file", func(l serverLayout) string { return l.pgpass }, "PGPASSFILE", false, "a PostgreSQL secret file"},
	}
	const key = `projects[0] ("p").agent.sandbox.readOnly[0]: `
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			forms := []struct {
				name  string
				entry func(l serverLayout, target string) string
			}{
				{"the path itself", func(_ serverLayout, target string) string { return target }},
				{"its folder", func(_ serverLayout, target string) string { return filepath.Dir(target) }},
				{"a link to it", func(l serverLayout, target string) string { return l.link(t, "to-it", target) }},
				{"a link to its folder", func(l serverLayout, target string) string {
					return l.link(t, "to-folder", filepath.Dir(target))
				}},
				{"a path through a link to its folder", func(l serverLayout, target string) string {
					return filepath.Join(l.link(t, "through", filepath.Dir(target)), filepath.Base(target))
				}},
				{"a relative link to its folder", func(l serverLayout, target string) string {
					rel, err := filepath.Rel(l.links, filepath.Dir(target))
					if err != nil {
						t.Fatal(err)
					}
					return l.link(t, "relative", rel)
				}},
				{"a link to a link to its folder", func(l serverLayout, target string) string {
					return l.link(t, "chain", l.link(t, "chain-inner", filepath.Dir(target)))
				}},
			}
			if k.isDir {
				forms = append(forms, []struct {
					name  string
					entry func(l serverLayout, target string) string
				}{
					{"a folder in it", func(_ serverLayout, target string) string {
						sub := filepath.Join(target, "sub")
						if err := os.MkdirAll(sub, 0o700); err != nil {
							t.Fatal(err)
						}
						return sub
					}},
					{"a dangling link into it", func(l serverLayout, target string) string {
						return l.link(t, "dangling", filepath.Join(target, "made-later"))
					}},
				}...)
			} else {
				forms = append(forms, struct {
					name  string
					entry func(l serverLayout, target string) string
				}{"a hard link to it", func(l serverLayout, target string) string {
					p := filepath.Join(l.links, "hard")
					if err := os.Link(target, p); err != nil {
						t.Fatal(err)
					}
					return p
				}})
			}
			for _, f := range forms {
				t.Run(f.name, func(t *testing.T) {
					l := newServerLayout(t)
					target := k.path(l)
					entry := f.entry(l, target)
					l.writeConfig(t, entry)
					r := l.check(t)
					r.expect(t, exitUsage, key+`"`+entry+`"`, k.subject, k.key, "the agent would read the server's own files")
					if !strings.Contains(r.stderr, target) && !strings.Contains(r.stderr, filepath.Dir(target)) {
						t.Errorf("the error does not name the server's path %s:\n%s", target, r.stderr)
					}
				})
			}
		})
	}
}

// TestServeRefusesSandboxOverDanglingServerPath: a server path that does
// not exist yet, reached through a link that dangles until serve makes
// it, is still kept out: the link says where it will be.
func TestServeRefusesSandboxOverDanglingServerPath(t *testing.T) {
	l := newServerLayout(t)
	later := filepath.Join(l.root, "later")
	if err := os.Mkdir(later, 0o700); err != nil {
		t.Fatal(err)
	}
	// The data folder is a link to a folder not made yet.
	if err := os.RemoveAll(l.data); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(later, "docsapi"), l.data); err != nil {
		t.Fatal(err)
	}
	l.writeConfig(t, later)
	l.check(t).expect(t, exitUsage, `readOnly[0]: "`+later+`" holds the data folder `+l.data+` (through links: `+filepath.Join(later, "docsapi")+`)`)
}

// TestServeAcceptsSandboxBesideServerPaths: entries that share no file with
// the server are accepted, links to them too, and a folder whose name
// merely begins like a server folder's.
func TestServeAcceptsSandboxBesideServerPaths(t *testing.T) {
	l := newServerLayout(t)
	lookalike := l.data + "-tools" // beside the data folder, not in it
	if err := os.MkdirAll(lookalike, 0o700); err != nil {
		t.Fatal(err)
	}
	l.writeConfig(t, l.tools, filepath.Join(l.tools, "bin"), l.link(t, "node", l.tools), lookalike, "/usr/share")
	l.check(t).expect(t, exitOK, "the configuration is valid")
}

// TestServeRefusesAtStart: serve itself, not only --print-config, stops at
// start, before it opens the storage.
func TestServeRefusesAtStart(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "var", "docsapi")
	config := writeFile(t, filepath.Join(root, "docsapi.json"), `{"data": "`+data+`", "git": {"workDir": "runs"},
  "projects": [{"id": "handbook", "repository": "https://git.example.com/handbook.git", "host": {"kind": "push-only"},
    "agent": {"kind": "command", "command": "sh", "sandbox": {"readOnly": ["`+filepath.Dir(data)+`"]}}}]}`)
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	// Bounded: serve without the check would serve until the end.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	r := runCLIContext(ctx, t, map[string]string{"HOME": root}, "", "serve", "--config", config, "--listen", "127.0.0.1:0")
	r.expect(t, exitUsage, `projects[0] ("handbook").agent.sandbox.readOnly[0]: "`+filepath.Dir(data)+`" holds the data folder `+data+" (data)")
	if _, err := os.Stat(filepath.Join(data, dbFileName)); err == nil {
		t.Error("serve made its database before refusing the configuration")
	}
}

func TestResolvePath(t *testing.T) {
	root := t.TempDir()
	mustLink := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "real", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	mustLink(filepath.Join(root, "real"), "abs")
	mustLink("real/sub", "rel")
	mustLink("rel/..", "up") // .. of the link's target, not of the link
	mustLink(filepath.Join(root, "missing", "deeper"), "dangling")
	mustLink("loop-b", "loop-a")
	mustLink("loop-a", "loop-b")
	for in, want := range map[string]string{
		root + "/abs":             root + "/real",
		root + "/abs/sub":         root + "/real/sub",
		root + "/rel":             root + "/real/sub",
		root + "/up":              root + "/real",
		root + "/dangling":        root + "/missing/deeper",
		root + "/dangling/x/../y": root + "/missing/deeper/y",
		root + "/nothing/here":    root + "/nothing/here",
		root + "/loop-a/x":        "", // any answer, but an answer
	} {
		got := resolvePath(in)
		if want != "" && got != want {
			t.Errorf("resolvePath(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestServeRefusesSandboxOverLinkedDatabase: a database file that is a
// link to another folder keeps that folder out too (SQLite writes its
// journal beside the link's target).
func TestServeRefusesSandboxOverLinkedDatabase(t *testing.T) {
	l := newServerLayout(t)
	elsewhere := filepath.Join(l.root, "dbstore")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(l.data, dbFileName)
	if err := os.Rename(db, filepath.Join(elsewhere, dbFileName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, dbFileName), db); err != nil {
		t.Fatal(err)
	}
	l.writeConfig(t, elsewhere)
	l.check(t).expect(t, exitUsage, `readOnly[0]: "`+elsewhere+`" holds the SQLite database `+db+` (through links: `+filepath.Join(elsewhere, dbFileName)+`)`)
}
