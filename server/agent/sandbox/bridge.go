package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Exit statuses of BridgeMain when the program did not run, as a shell
// reports them.
const (
	bridgeFailed     = 125 // the bridge itself failed
	bridgeCannotExec = 126 // the program is there but cannot run
	bridgeNotFound   = 127 // the program is not there
)

// BridgeMain is the network bridge that runs inside the sandbox when
// Config.AllowHosts is set: programs reach a proxy at a TCP address, and
// the sandbox has no network but its own loopback interface, so the bridge
// listens on a loopback address there and passes each connection on to the
// proxy's Unix socket, which the sandbox shows it. It starts the program as
// its child, with its own standard input, output, error and environment,
// waits for it and returns its exit status (128 plus the signal's number
// when a signal ended it), for the caller to exit with.
//
// args are the arguments after the bridge's command (Config.Bridge), as
// the sandbox passes them:
//
//	-listen 127.0.0.1:3128 -socket /run/docsapi/proxy.sock -- program [argument...]
//
// It reads no variables for itself.
func BridgeMain(args []string) int {
	flags := flag.NewFlagSet("sandbox-bridge", flag.ContinueOnError)
	listen := flags.String("listen", bridgeAddr, "the TCP `address` to listen on")
	socket := flags.String("socket", socketPath, "the proxy's Unix socket `path`")
	if err := flags.Parse(args); err != nil {
		return bridgeFailed
	}
	if flags.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "sandbox-bridge: no program to run (want: -listen ADDRESS -socket PATH -- PROGRAM [ARGUMENT...])")
		return bridgeFailed
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-bridge:", err)
		return bridgeFailed
	}
	defer l.Close()
	go forward(l, *socket)

	cmd := exec.Command(flags.Arg(0), flags.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-bridge:", err)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return bridgeNotFound
		case errors.Is(err, fs.ErrPermission):
			return bridgeCannotExec
		}
		return bridgeFailed
	}
	_ = cmd.Wait()
	return exitStatus(cmd.ProcessState)
}

// exitStatus returns a finished process's exit status, or 128 plus the
// signal's number if a signal ended it, as shells and bwrap report it.
func exitStatus(ps *os.ProcessState) int {
	// syscall.WaitStatus has these methods wherever it exists.
	if ws, ok := ps.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	}); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// forward passes each connection accepted on l on to the Unix socket,
// until l is closed.
func forward(l net.Listener, socket string) {
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		go func() {
			up, err := net.DialTimeout("unix", socket, dialTimeout)
			if err != nil {
				// On the program's standard error, which its operator
				// reads.
				fmt.Fprintln(os.Stderr, "sandbox-bridge: the proxy is unreachable:", err)
				c.Close()
				return
			}
			splice(c, c, up)
		}()
	}
}
