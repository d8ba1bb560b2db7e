package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Hostname is the host name the program sees: the host's own would tell
// it which machine it runs on.
const Hostname = "docsapi-sandbox"

// socketPath is where the proxy's socket appears inside the sandbox: a
// fixed path, so that the bridge's arguments say nothing of the host's
// folders.
const socketPath = "/run/docsapi/proxy.sock"

// namespaceArgs make the sandbox's namespaces and strip the program's
// privileges. --disable-userns forbids the program new user namespaces,
// which would give it capabilities over the kernel's less-trodden paths;
// --new-session keeps it from typing into the server's terminal (TIOCSTI);
// --die-with-parent kills the sandbox when bwrap dies. --clearenv comes
// first so that the variables set later are the program's only ones.
var namespaceArgs = []string{
	"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try",
	"--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", Hostname,
	"--clearenv",
}

// systemPaths are the top folders that hold programs and libraries. On
// a merged /usr (Debian 12, Fedora) they are links into /usr.
var systemPaths = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcPaths are what programs read from /etc to start and to reach a
// server: the links of /usr/bin into alternatives, the dynamic linker's
// cache, CA certificates, name service and time zone files. /etc/ssl is
// shown in parts: its private folder holds the host's TLS keys.
var etcPaths = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/ca-certificates.conf",
	"/etc/pki/tls/certs", "/etc/pki/ca-trust/extracted",
	"/etc/nsswitch.conf", "/etc/hosts", "/etc/localtime", "/etc/passwd", "/etc/group",
	"/etc/mime.types", "/etc/services", "/etc/protocols",
}

// rootArgs returns the mounts of the sandbox's own /proc, /dev, /dev/shm
// and /tmp and of its read-only root, and the paths they make visible. host
// prefixes every host path looked at ("" but in tests). The file systems
// that live in memory are capped by l: /dev/shm and /tmp have sizes of their
// own, and /dev (where bubblewrap makes the device nodes) is made read-only,
// since a tmpfs of bubblewrap's without a size would take up to half the
// host's memory. /tmp comes first among the folders, since other mounts may
// lie in it.
func rootArgs(host string, l Limits) (args, visible []string) {
	args = []string{"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(l.ShmSize, 10), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", strconv.FormatInt(l.TmpSize, 10), "--tmpfs", "/tmp",
		"--ro-bind", host + "/usr", "/usr"}
	visible = []string{"/usr"}
	for _, p := range systemPaths {
		fi, err := os.Lstat(host + p)
		switch {
		case err != nil:
			// Absent here (lib32 on most machines).
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(host + p)
			if err != nil {
				continue
			}
			args = append(args, "--symlink", target, p)
			visible = append(visible, p)
		case fi.IsDir():
			args = append(args, "--ro-bind", host+p, p)
			visible = append(visible, p)
		}
	}
	for _, p := range etcPaths {
		// A link is followed: /etc/localtime names a file in /usr.
		if _, err := os.Stat(host + p); err == nil {
			args = append(args, "--ro-bind", host+p, p)
			visible = append(visible, p)
		}
	}
	return args, visible
}

// mounts describes the folders and files of one run.
type mounts struct {
	readOnly []string // more host paths, read-only at their own paths
	dir      string   // the workspace: writable, at its own path, and the working folder
	home     string   // where the home's tmpfs is mounted
	socket   string   // the proxy's socket on the host, or ""
}

// options returns bwrap's options for a run, without the variables, in an
// order bwrap can apply: a mount point inside another mount comes after it,
// and the writable folders after the read-only ones, so that a workspace
// under a read-only path stays writable. The home is a tmpfs of the
// sandbox's own, capped by l: nothing the program stores there reaches the
// host's disk. The root's tmpfs is made read-only last: the program writes
// only where it is meant to.
func options(host string, m mounts, l Limits) []string {
	root, _ := rootArgs(host, l)
	args := append(append([]string(nil), namespaceArgs...), root...)
	for _, p := range m.readOnly {
		args = append(args, "--ro-bind", p, p)
	}
	args = append(args, "--bind", m.dir, m.dir, "--size", strconv.FormatInt(l.HomeSize, 10), "--tmpfs", m.home)
	if m.socket != "" {
		// Read-only still lets the bridge connect: a socket's mount flags
		// do not apply to connect().
		args = append(args, "--ro-bind", m.socket, socketPath)
	}
	return append(args, "--remount-ro", "/", "--chdir", m.dir)
}

// visibleAt reports whether path is visible in a sandbox whose visible
// roots are roots.
func visibleAt(path string, roots []string) bool {
	for _, r := range roots {
		if within(path, r) {
			return true
		}
	}
	return false
}

// binary returns the path to run a program at inside the sandbox, and the
// host path to bind read-only for it ("" if none). A program outside the
// visible paths is bound at its resolved path and run from there: a link
// to it may pass through folders the sandbox does not have.
func binary(path string, roots []string) (run, bind string, err error) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", "", err
	}
	if visibleAt(path, roots) && visibleAt(resolved, roots) {
		return path, "", nil
	}
	return resolved, resolved, nil
}
