//go:build unix

package command

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/sandbox"
	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
)

// TestMain lets the test binary play the parts a test needs in a process of
// its own, chosen by its first argument: the sandbox's network bridge, an
// agent program that tries the network, or a server that runs an agent
// and is then killed.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		if role, ok := roles[os.Args[1]]; ok {
			os.Exit(role(os.Args[2:]))
		}
	}
	// Cgroups of this binary's own, so that another package's tests,
	// running at once, cannot sweep the leftovers these tests check.
	restore, err := sandboxtest.OwnCgroups()
	if err != nil {
		fmt.Fprintln(os.Stderr, "placing the tests in cgroups of their own:", err)
		os.Exit(2)
	}
	code := m.Run()
	restore()
	os.Exit(code)
}

var roles = map[string]func(args []string) int{
	"sandbox-bridge":     sandbox.BridgeMain,
	"test-agent-dial":    agentDial,
	"test-agent-connect": agentConnect,
	"test-server":        serverRole,
}

// agentDial connects to each address directly and writes what happened to
// net.txt in its working folder.
func agentDial(addrs []string) int {
	var out strings.Builder
	for _, addr := range addrs {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			fmt.Fprintf(&out, "%s: failed: %v\n", addr, err)
			continue
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		fmt.Fprintf(&out, "%s: connected: %s", addr, line)
	}
	return writeResult("net.txt", out.String())
}

// agentConnect asks the proxy named by HTTPS_PROXY for a tunnel to each
// address, reads a line through each tunnel it gets, and writes what
// happened to net.txt. It speaks CONNECT itself: Go's http.Client never
// uses a proxy for a loopback address, which the test's server has.
func agentConnect(addrs []string) int {
	var out strings.Builder
	for _, name := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy"} {
		v, ok := os.LookupEnv(name)
		fmt.Fprintf(&out, "env %s=%q %v\n", name, v, ok)
	}
	proxy, err := url.Parse(os.Getenv("HTTPS_PROXY"))
	if err != nil || proxy.Host == "" {
		fmt.Fprintf(&out, "no proxy: %q %v\n", os.Getenv("HTTPS_PROXY"), err)
		return writeResult("net.txt", out.String())
	}
	for _, addr := range addrs {
		c, err := net.DialTimeout("tcp", proxy.Host, 2*time.Second)
		if err != nil {
			fmt.Fprintf(&out, "%s: proxy unreachable: %v\n", addr, err)
			continue
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
		br := bufio.NewReader(c)
		status, _ := br.ReadString('\n')
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		fmt.Fprintf(&out, "%s: %s", addr, status)
		if strings.Contains(status, " 200 ") {
			line, _ := br.ReadString('\n')
			fmt.Fprintf(&out, "%s: through the tunnel: %s", addr, line)
		}
		c.Close()
	}
	return writeResult("net.txt", out.String())
}

func writeResult(name, text string) int {
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// serverRole runs one agent the way the server does: args are the
// workspace, the folder of the runs, the sandbox's mode and the shell
// script of the agent. Tests kill this process while the agent runs.
func serverRole(args []string) int {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "test-server: want workspace, run folder, mode and script")
		return 2
	}
	cfg := Config{Command: "/bin/sh", Args: []string{"-c", args[3]}, Dir: args[1], Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	cfg.Sandbox.Mode = sandbox.Mode(args[2])
	a, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = a.Run(context.Background(), task(args[0], "x"))
	fmt.Fprintln(os.Stderr, "test-server: Run returned:", err)
	return 0
}
