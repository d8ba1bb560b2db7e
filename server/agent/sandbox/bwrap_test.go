//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeHost makes a host tree: a merged /usr with /bin and /lib as links,
// /lib64 a folder, /lib32 absent, and some of /etc.
func fakeHost(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/lib", "usr/sbin", "lib64", "etc/alternatives", "etc/ssl/certs", "etc/ssl/private", "usr/share/zoneinfo"} {
		if err := os.MkdirAll(filepath.Join(h, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"bin": "usr/bin", "lib": "usr/lib", "sbin": "usr/sbin", "etc/localtime": "../usr/share/zoneinfo/UTC", "etc/broken": "nowhere"} {
		if err := os.Symlink(target, filepath.Join(h, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"etc/passwd", "etc/hosts", "etc/shadow", "etc/docsapi.toml", "usr/share/zoneinfo/UTC"} {
		if err := os.WriteFile(filepath.Join(h, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestRootArgs(t *testing.T) {
	h := fakeHost(t)
	args, visible := rootArgs(h, Limits{TmpSize: 3 << 20, ShmSize: 2 << 20})
	want := []string{
		"--proc", "/proc", "--dev", "/dev", "--size", "2097152", "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", "3145728", "--tmpfs", "/tmp",
		"--ro-bind", h + "/usr", "/usr",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin", "--symlink", "usr/lib", "/lib",
		"--ro-bind", h + "/lib64", "/lib64",
		"--ro-bind", h + "/etc/alternatives", "/etc/alternatives", "--ro-bind", h + "/etc/ssl/certs", "/etc/ssl/certs",
		"--ro-bind", h + "/etc/hosts", "/etc/hosts", "--ro-bind", h + "/etc/localtime", "/etc/localtime",
		"--ro-bind", h + "/etc/passwd", "/etc/passwd",
	}
	if !slices.Equal(args, want) {
		t.Errorf("rootArgs =\n%q\nwant\n%q", args, want)
	}
	wantVisible := []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/alternatives", "/etc/ssl/certs", "/etc/hosts", "/etc/localtime", "/etc/passwd"}
	if !slices.Equal(visible, wantVisible) {
		t.Errorf("visible = %q, want %q", visible, wantVisible)
	}
}

// TestOptionsShowNothingElse: whatever the host holds, the options bind
// only the paths of the root, the run's folders and the socket.
func TestOptionsShowNothingElse(t *testing.T) {
	h := fakeHost(t)
	opts := options(h, mounts{readOnly: []string{"/opt/node"}, dir: "/srv/docs/job_1", home: "/tmp/run/h",
		socket: "/tmp/run/proxy.sock"}, Limits{}.WithDefaults())
	text := strings.Join(opts, "\x00")
	for _, bad := range []string{"shadow", "docsapi.toml", "private", "broken", "/home", "/root", "/var", "/run/user", "/sys"} {
		if strings.Contains(text, bad) {
			t.Errorf("the options name %q: %q", bad, opts)
		}
	}
	if !slices.Equal(opts[:len(namespaceArgs)], namespaceArgs) {
		t.Errorf("the options do not start with the namespaces: %q", opts)
	}
	tail := strings.Join(opts[len(opts)-17:], " ")
	want := "--ro-bind /opt/node /opt/node --bind /srv/docs/job_1 /srv/docs/job_1 --size 536870912 --tmpfs /tmp/run/h " +
		"--ro-bind /tmp/run/proxy.sock " + socketPath + " --remount-ro / --chdir /srv/docs/job_1"
	if tail != want {
		t.Errorf("the options end\n%s\nwant\n%s", tail, want)
	}
}

func TestBinary(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "agent")
	if err := os.WriteFile(prog, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(prog, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path      string
		roots     []string
		run, bind string
	}{
		{"/usr/bin/true", []string{"/usr"}, "/usr/bin/true", ""},
		{prog, []string{"/usr"}, prog, prog},
		{link, []string{"/usr"}, prog, prog},
		{link, []string{"/usr", dir}, link, ""},
	}
	for _, tt := range tests {
		run, bind, err := binary(tt.path, tt.roots)
		if err != nil || run != tt.run || bind != tt.bind {
			t.Errorf("binary(%s, %q) = %q, %q, %v; want %q, %q", tt.path, tt.roots, run, bind, err, tt.run, tt.bind)
		}
	}
	if _, _, err := binary(filepath.Join(dir, "missing"), nil); err == nil {
		t.Error("binary of a missing program succeeded")
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		path, root string
		want       bool
	}{
		{"/usr", "/usr", true}, {"/usr/bin/x", "/usr", true}, {"/usrx", "/usr", false}, {"/", "/usr", false}, {"/x", "/", true},
	}
	for _, tt := range tests {
		if got := within(tt.path, tt.root); got != tt.want {
			t.Errorf("within(%q, %q) = %v", tt.path, tt.root, got)
		}
	}
}

func TestCheckReadOnly(t *testing.T) {
	opt := t.TempDir()
	if got, err := checkReadOnly(opt + "/."); err != nil || got != opt {
		t.Errorf("checkReadOnly(%q) = %q, %v", opt+"/.", got, err)
	}
	tests := []struct{ path, want string }{
		{"", "empty"},
		{"opt/node", "is relative"},
		{"./node", "is relative"},
		{"/", "much of the host"},
		{"/etc/", "much of the host"},
		{"/home", "much of the host"},
		{"/var", "much of the host"},
		{"/tmp", "much of the host"},
		{"/proc/self", "under /proc"},
		{"/run/docsapi", "under /run"},
		{"/sys", "under /sys"},
		{opt + "/missing", "no such file"},
	}
	for _, tt := range tests {
		if _, err := checkReadOnly(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkReadOnly(%q) = %v, want an error about %q", tt.path, err, tt.want)
		}
	}
}

func TestWithProxy(t *testing.T) {
	got := withProxy([]string{"A=1", "https_proxy=http://corp:8080", "No_Proxy=*", "all_proxy=x", "B=2"}, "http://127.0.0.1:3128")
	want := []string{"A=1", "B=2", "HTTPS_PROXY=http://127.0.0.1:3128", "HTTP_PROXY=http://127.0.0.1:3128",
		"https_proxy=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128", "ALL_PROXY=http://127.0.0.1:3128", "NO_PROXY=", "no_proxy="}
	if !slices.Equal(got, want) {
		t.Errorf("withProxy =\n%q\nwant\n%q", got, want)
	}
}
