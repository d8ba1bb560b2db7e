package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/procgroup"
)

// infoTimeout bounds the wait for bwrap to say which process its sandbox
// is; it does so as soon as it has made it, in milliseconds.
const infoTimeout = 30 * time.Second

// gate holds the sandbox's program back until the run's limits are in
// place. bwrap (--block-fd) makes the sandbox, then waits to read a byte
// before it starts the program; and it writes the id of the sandbox's
// first process (--info-fd) as soon as it has one. Start reads the id,
// checks that the process is in the run's cgroups or sets its process
// limit, and only then opens the gate. A run started otherwise never opens
// it: its program never runs.
type gate struct {
	wait, open   *os.File // the pipe bwrap waits on: its end, and ours
	info, infoW  *os.File // the pipe bwrap writes the id to: ours, and its end
	opened, shut bool
}

func newGate() (gate, error) {
	var g gate
	var err error
	if g.wait, g.open, err = os.Pipe(); err != nil {
		return gate{}, fmt.Errorf("sandbox: %w", err)
	}
	if g.info, g.infoW, err = os.Pipe(); err != nil {
		g.wait.Close()
		g.open.Close()
		return gate{}, fmt.Errorf("sandbox: %w", err)
	}
	return g, nil
}

// closeChildEnds closes the ends that only bwrap needs.
func (g *gate) closeChildEnds() {
	for _, f := range []*os.File{g.wait, g.infoW} {
		if f != nil {
			f.Close()
		}
	}
	g.wait, g.infoW = nil, nil
}

// Start starts bwrap with the run's limits: in the run's cgroups from its
// first instruction, or with the sandbox's process limit set before the
// program starts. An error after bwrap started leaves it killed and
// waited for.
func (c *Cmd) Start() error {
	if c.Process != nil {
		return errors.New("sandbox: already started")
	}
	var err error
	if c.cgroup != nil {
		err = c.cgroup.start(c.Cmd.Start)
	} else {
		err = c.Cmd.Start()
	}
	c.gate.closeChildEnds()
	if err != nil {
		if c.Process != nil {
			c.abort()
		}
		return err
	}
	pid, err := sandboxPid(c.gate.info)
	if errors.Is(err, errNoSandbox) {
		// bwrap ended before it made the sandbox, saying why on its
		// standard error; Wait gives its status. There is no program to
		// hold back.
		return nil
	}
	if err == nil {
		err = c.confine(pid)
	}
	if err != nil {
		c.abort()
		return err
	}
	c.gate.opened = true
	// An error here means that bwrap is gone: Wait tells how it ended.
	_, _ = c.gate.open.Write([]byte{1})
	return nil
}

// Run starts the sandbox (Start) and waits for it to end.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// abort kills bwrap, and with it the sandbox, and waits for it.
func (c *Cmd) abort() {
	_ = procgroup.Kill(c.Process)
	_ = c.Cmd.Wait()
}

// errNoSandbox is sandboxPid's error when bwrap ended without a sandbox.
var errNoSandbox = errors.New("sandbox: bwrap made no sandbox")

// sandboxPid reads the id of the sandbox's first process from bwrap's
// information pipe.
func sandboxPid(info *os.File) (int, error) {
	_ = info.SetReadDeadline(time.Now().Add(infoTimeout))
	var v struct {
		ChildPid int `json:"child-pid"`
	}
	err := json.NewDecoder(info).Decode(&v)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, fmt.Errorf("sandbox: bwrap did not make the sandbox within %s", infoTimeout)
	case err != nil || v.ChildPid <= 0:
		return 0, errNoSandbox
	}
	return v.ChildPid, nil
}

// confine puts the run's limits on the sandbox whose first process is pid,
// which waits at the gate.
func (c *Cmd) confine(pid int) error {
	if c.cgroup != nil && !c.cgroup.holds(pid) {
		return fmt.Errorf("sandbox: the sandbox's process %d is not in the run's cgroup", pid)
	}
	if c.nproc > 0 {
		if err := setNproc(pid, c.nproc); err != nil {
			return fmt.Errorf("sandbox: setting the sandbox's process limit: %w", err)
		}
	}
	if c.fsize > 0 {
		if err := setFileSize(pid, c.fsize); err != nil {
			return fmt.Errorf("sandbox: setting the sandbox's file size limit: %w", err)
		}
	}
	return nil
}

// Exhaustion says which of its limits the run reached so far: the kernel's
// counts in the run's cgroups. It is zero where no cgroup enforces the
// limits. Call it after Wait and before Close.
func (c *Cmd) Exhaustion() Exhaustion {
	if c.cgroup == nil {
		return Exhaustion{}
	}
	return c.cgroup.exhaustion()
}

// Close stops the run's proxy, closing its tunnels and removing its socket,
// kills what is left of the sandbox, removes the run's cgroups, and
// releases what Command opened. Call it after Wait.
func (c *Cmd) Close() error {
	if c.gate.shut {
		return nil
	}
	c.gate.shut = true
	if c.Process != nil && !c.gate.opened && c.ProcessState == nil {
		// Started without Start: the sandbox waits at the gate, which
		// would open when its end is closed. bwrap's death kills it
		// first.
		_ = procgroup.Kill(c.Process)
		waitGone(c.Process.Pid)
	}
	return c.release()
}

// release closes what Command made.
func (c *Cmd) release() error {
	var err error
	if c.proxy != nil {
		err = c.proxy.Close()
	}
	c.gate.closeChildEnds()
	for _, f := range []*os.File{c.gate.open, c.gate.info, c.args} {
		if f != nil {
			f.Close()
		}
	}
	if c.cgroup != nil {
		err = errors.Join(err, c.cgroup.remove())
	}
	return err
}
