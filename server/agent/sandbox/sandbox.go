// Package sandbox runs a program under bubblewrap (bwrap) so that it sees
// and reaches only what its run needs. It is made for coding agents, whose
// actions a model chooses from text an attacker may have written, so it
// treats the program as the attacker.
//
// A sandboxed program runs in new user, PID, IPC, UTS, network and (where
// the kernel has them) cgroup namespaces, with no capabilities, in a
// session of its own, under a read-only root made of the host's /usr, the
// /bin and /lib links or folders, and the few files of /etc that programs
// need to start. It has its own /proc (showing only the sandbox's
// processes), a read-only /dev, and /dev/shm, /tmp and the run's home on
// file systems in memory, each of a capped size. One host folder is
// writable: the workspace. Nothing else of the host is there: not the
// server's configuration, data or secret files, not /home, /root, /var,
// /run or /sys. PATH is the sandbox's own (see Sandbox.Path), whatever the
// server's.
//
// # Resources
//
// Each run has limits of its own (Config.Limits): how many processes it
// may have, how much memory it may take, and the sizes of /tmp, /dev/shm
// and the home. Where the server can make cgroups (version 2 with the pids
// controller delegated to it, or version 1 with the pids and memory
// hierarchies writable), each run gets its own, from bubblewrap's first
// instruction, removed at the end of the run; New removes those a killed
// server left. Elsewhere the process limit is RLIMIT_NPROC, set on the
// sandbox's first process inside its user namespace, which counts only the
// sandbox's processes; it binds nothing when the server runs as root, and
// memory is then not capped but by the file systems' sizes. Sandbox.Limits
// says which mechanism enforces what here. A run may also bound the size
// of each file its processes write (Run.MaxFileSize, RLIMIT_FSIZE), which
// no process of the sandbox can raise.
//
// The network is off: the sandbox has only a loopback interface. With
// Config.AllowHosts, the server runs an HTTP CONNECT proxy for the run that
// opens tunnels to those hosts only, and a bridge inside the sandbox (see
// BridgeMain) makes it reachable at a loopback address, which the program
// finds in HTTPS_PROXY and its kin. The proxy resolves an allowed name
// itself and dials only the addresses it checked, none of the server's own
// machine, networks or cloud metadata services unless
// Config.AllowAddresses allows them: a name's owner can point it anywhere.
//
// Nothing outlives the run: bwrap gets SIGKILL when the server's thread
// that started it dies (and the sandbox when bwrap dies), and killing
// bwrap's process group at the end of the run ends the PID namespace, and
// with it every process the program started, those that called setsid
// included.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Mode says whether the program runs in a sandbox.
type Mode string

// The modes. The zero value is Required.
const (
	// Required runs every program in the sandbox; New fails when the
	// sandbox cannot run on this machine.
	Required Mode = "required"
	// Off runs the program as the server's user with no sandbox. It then
	// can read everything the server can: the configuration, the secret
	// files it names, the data folder, and through /proc the server's own
	// environment (host tokens, the database's password). It can write
	// wherever the server can, connect anywhere, and leave processes
	// running after the run (a grandchild that calls setsid escapes the
	// kill at the end of the run). Use it only where the agent is trusted
	// as much as the server.
	Off Mode = "off"
)

// DefaultBwrap is the bubblewrap program looked up in PATH when
// Config.Bwrap is empty.
const DefaultBwrap = "bwrap"

// Config configures a Sandbox.
type Config struct {
	// Mode is Required (the zero value) or Off. The sandbox is off only
	// when this says so: a machine that cannot run it fails New, never
	// falls back.
	Mode Mode
	// Bwrap is the bubblewrap program, a path or a name looked up in
	// PATH; default DefaultBwrap.
	Bwrap string
	// ReadOnly lists more host paths the program sees, read-only, at the
	// same path: where its runtime lives outside /usr, such as /opt/node.
	// They must be absolute and exist; the host's top folders (/, /etc,
	// /home, /root, /tmp, /var) and /proc, /sys, /dev, /run are refused.
	// Never name a folder that holds the server's data, configuration or
	// secrets, or the other jobs' workspaces.
	ReadOnly []string
	// Limits bound the resources of each run; zero fields take their
	// defaults.
	Limits Limits
	// AllowHosts lists the hosts the program may connect to, through a
	// proxy for HTTPS (CONNECT) tunnels: "api.example.com" (port 443),
	// "api.example.com:8443", "[2001:db8::1]:443", or "*.example.com" for
	// every subdomain of example.com (not example.com itself), with an
	// optional port. Empty: no network at all. Needs Bridge.
	//
	// The proxy resolves a name itself and dials only the addresses it
	// checked, never those of the server's own machine or networks:
	// loopback, private (RFC 1918), shared (100.64.0.0/10), link-local,
	// unique-local, multicast, unspecified, broadcast, documentation and
	// reserved addresses, their IPv4-mapped, NAT64 and 6to4 forms, and the
	// cloud metadata services (169.254.169.254 and others), unless
	// AllowAddresses allows them. An IP address written here counts the
	// same: "127.0.0.1:8080" needs "127.0.0.1" in AllowAddresses.
	AllowHosts []string
	// AllowAddresses lists the addresses the proxy refuses by default
	// that it may dial for AllowHosts: an address ("10.0.0.5",
	// "fd00::5") or a network in CIDR notation ("10.0.0.0/24"), such as a
	// model server on the local network. A cloud metadata address is
	// allowed only by an entry of that one address, never by a network
	// holding it. An entry that allows no refused address is an error
	// (an ordinary public address needs none), and so is one of every
	// address (0.0.0.0/0, ::/0). Needs AllowHosts.
	AllowAddresses []string
	// Bridge is the command that starts the network bridge inside the
	// sandbox, the program and its first arguments: a program that calls
	// BridgeMain with the arguments that follow them, such as
	// {"/usr/local/bin/docsapi", "sandbox-bridge"}. It is used only with
	// AllowHosts; the program is bound into the sandbox read-only.
	Bridge []string
}

// Sandbox runs programs under bubblewrap. It is safe for concurrent use:
// each run has its own sandbox and proxy.
type Sandbox struct {
	bwrap    string
	readOnly []string
	// readOnlyReal are the readOnly paths with their links followed, as
	// New found them: a run whose paths lead elsewhere is refused.
	readOnlyReal []string
	allow        *allowlist // nil: no network
	bridge       []string   // Bridge with its program resolved; nil without allow
	path         string     // PATH in the sandbox
	limits       Limits     // Config.Limits with the defaults
	enforced     Enforcement
	cgroups      *cgroupHost // nil: no cgroup is made for the runs
	swept        []string
	sweepErr     error
}

// ErrUnavailable is the error New and Check return when this machine
// cannot run the sandbox; the error wrapping it says why and what to do.
var ErrUnavailable = errors.New("the agent sandbox cannot run here")

// New checks cfg and that bubblewrap can make the sandbox on this machine
// (see Check), and returns a Sandbox. It refuses a cfg whose Mode is Off:
// there is no sandbox to make then.
func New(cfg Config) (*Sandbox, error) {
	switch cfg.Mode {
	case "", Required:
	case Off:
		return nil, errors.New("sandbox: Mode is off, so there is no sandbox to make")
	default:
		return nil, fmt.Errorf("sandbox: Mode %q is neither %q nor %q", cfg.Mode, Required, Off)
	}
	if err := cfg.Limits.Check(nil); err != nil {
		return nil, err
	}
	s := &Sandbox{limits: cfg.Limits.WithDefaults()}
	for _, p := range cfg.ReadOnly {
		clean, err := checkReadOnly(p)
		if err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(clean)
		if err != nil {
			return nil, fmt.Errorf("sandbox: ReadOnly path %q: %w", p, err)
		}
		s.readOnly = append(s.readOnly, clean)
		s.readOnlyReal = append(s.readOnlyReal, real)
	}
	if len(cfg.AllowAddresses) > 0 && len(cfg.AllowHosts) == 0 {
		return nil, errors.New("sandbox: AllowAddresses applies only to the hosts of AllowHosts, which is empty")
	}
	s.path = sandboxPath(s.readOnly)
	if len(cfg.AllowHosts) > 0 {
		allow, err := parseAllowlist(cfg.AllowHosts)
		if err != nil {
			return nil, err
		}
		if allow.addrs, err = parseAllowAddresses(cfg.AllowAddresses); err != nil {
			return nil, err
		}
		if err := allow.checkAddresses(); err != nil {
			return nil, err
		}
		if len(cfg.Bridge) == 0 {
			return nil, errors.New(`sandbox: AllowHosts needs Bridge, the command that starts the network bridge inside the sandbox, such as ["/usr/local/bin/docsapi", "sandbox-bridge"]`)
		}
		prog, err := exec.LookPath(cfg.Bridge[0])
		if err != nil {
			return nil, fmt.Errorf("sandbox: Bridge: %w", err)
		}
		if prog, err = filepath.Abs(prog); err != nil {
			return nil, fmt.Errorf("sandbox: Bridge: %w", err)
		}
		s.allow = allow
		s.bridge = append([]string{prog}, cfg.Bridge[1:]...)
	}
	bwrap := cfg.Bwrap
	if bwrap == "" {
		bwrap = DefaultBwrap
	}
	if err := Check(bwrap); err != nil {
		return nil, err
	}
	path, _ := exec.LookPath(bwrap) // Check found it
	s.bwrap, _ = filepath.Abs(path)
	s.cgroups, s.enforced = enforcement()
	if s.cgroups != nil {
		s.swept, s.sweepErr = s.cgroups.sweep()
	}
	return s, nil
}

// enforcement returns where runs' cgroups are made (nil: nowhere) and how
// the limits are enforced on this machine.
func enforcement() (*cgroupHost, Enforcement) {
	h := cgroups()
	e := Enforcement{Processes: Unenforced, Memory: Unenforced}
	mechanism := CgroupV1
	if h.v2 {
		mechanism = CgroupV2
	}
	var notes []string
	if h.note != "" {
		notes = append(notes, h.note)
	}
	switch {
	case h.pids != "":
		e.Processes = mechanism
		e.Cgroups = append(e.Cgroups, h.pids)
	case rootOfTheHost("/proc/self/uid_map"):
		notes = append(notes, "the server runs as root, which RLIMIT_NPROC does not bind, so nothing limits the agent's processes: run the server as a user of its own, or give it a cgroup")
	default:
		e.Processes = RlimitNproc
	}
	if h.memory != "" {
		e.Memory, e.SwapCounted = mechanism, h.swap
		if h.memory != h.pids {
			e.Cgroups = append(e.Cgroups, h.memory)
		}
	} else {
		notes = append(notes, "memory is not capped but by the sizes of /tmp, /dev/shm and the home")
	}
	if e.Processes == Unenforced || e.Processes == RlimitNproc || e.Memory == Unenforced {
		e.Note = strings.Join(notes, "; ")
	}
	if h.pids == "" && h.memory == "" {
		return nil, e
	}
	return h, e
}

// Limits returns the limits of each run (Config.Limits with the defaults)
// and how this machine enforces them.
func (s *Sandbox) Limits() (Limits, Enforcement) {
	e := s.enforced
	e.Cgroups = slices.Clone(e.Cgroups)
	return s.limits, e
}

// Swept returns the cgroups of runs that New removed, left by a server
// that died, and the error of the ones it could not remove.
func (s *Sandbox) Swept() ([]string, error) { return slices.Clone(s.swept), s.sweepErr }

// systemPath is the sandbox's PATH without Config.ReadOnly's folders.
const systemPath = "/usr/local/bin:/usr/bin:/bin"

// sandboxPath returns the PATH of the sandbox: the bin folder of each
// read-only path that has one (where a runtime such as /opt/node keeps its
// programs, which a program started by "#!/usr/bin/env node" needs), then
// the system's folders.
func sandboxPath(readOnly []string) string {
	var dirs []string
	for _, p := range readOnly {
		bin := filepath.Join(p, "bin")
		if fi, err := os.Stat(bin); err == nil && fi.IsDir() && !slices.Contains(dirs, bin) && !strings.Contains(bin, ":") {
			dirs = append(dirs, bin)
		}
	}
	return strings.Join(append(dirs, systemPath), ":")
}

// Path returns the PATH of the programs in the sandbox: the bin folder of
// each Config.ReadOnly path that has one, then /usr/local/bin:/usr/bin:/bin.
// The server's own PATH never reaches the sandbox: its folders are not
// there, and naming them tells the program about the host.
func (s *Sandbox) Path() string { return s.path }

// refusedReadOnly are folders that would show the sandbox far more than a
// program's runtime: the host's configuration, users' files, the server's
// state, other runs' folders.
var refusedReadOnly = []string{"/", "/etc", "/home", "/root", "/tmp", "/var", "/boot", "/mnt", "/media"}

// checkReadOnly checks a Config.ReadOnly path and returns it cleaned.
func checkReadOnly(p string) (string, error) {
	if p == "" {
		return "", errors.New("sandbox: ReadOnly holds an empty path")
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("sandbox: ReadOnly path %q is relative; write it in full, from /", p)
	}
	clean := filepath.Clean(p)
	if slices.Contains(refusedReadOnly, clean) {
		return "", fmt.Errorf("sandbox: ReadOnly path %q would show the sandbox much of the host; name the folder the program needs, such as /opt/node", p)
	}
	for _, root := range []string{"/proc", "/sys", "/dev", "/run"} {
		if within(clean, root) {
			return "", fmt.Errorf("sandbox: ReadOnly path %q is under %s, which the sandbox has its own of or must not see", p, root)
		}
	}
	if _, err := os.Stat(clean); err != nil {
		return "", fmt.Errorf("sandbox: ReadOnly path %q: %w", p, err)
	}
	return clean, nil
}

// ReadOnly returns the host paths the sandbox adds read-only
// (Config.ReadOnly, cleaned).
func (s *Sandbox) ReadOnly() []string { return slices.Clone(s.readOnly) }

// checkReadOnlyLinks refuses a run whose ReadOnly paths no longer lead
// where they led at New: bubblewrap follows a path's links at each run, and
// a link changed since (to the server's data, say) would show the program
// what the server checked it could not see.
func (s *Sandbox) checkReadOnlyLinks() error {
	for i, p := range s.readOnly {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("sandbox: ReadOnly path %s: %w", p, err)
		}
		if real != s.readOnlyReal[i] {
			return fmt.Errorf("sandbox: ReadOnly path %s now leads to %s, not to %s as when the server started and checked it: restore it, or restart the server to check it anew", p, real, s.readOnlyReal[i])
		}
	}
	return nil
}

// within reports whether path is root or lies under it. Both are clean
// and absolute.
func within(path, root string) bool {
	if root == "/" {
		return true
	}
	return path == root || len(path) > len(root) && path[:len(root)] == root && path[len(root)] == '/'
}
