package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/agent/sandbox/sandboxtest"
)

// TestMain lets the test binary play a program the tests start, chosen by
// its first argument: the bridge, or a client of the bridge.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "sandbox-bridge":
			os.Exit(BridgeMain(os.Args[2:]))
		case "test-echo":
			os.Exit(echoClient(os.Args[2], os.Args[3]))
		}
		if role, ok := roles[os.Args[1]]; ok {
			os.Exit(role())
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

// roles are more parts the test binary plays, named by its first
// argument, that tests of one platform add.
var roles = map[string]func() int{}

// echoClient sends a line to addr and writes the line it gets back to the
// file out.
func echoClient(addr, out string) int {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintln(c, "ping from "+strconv.Itoa(os.Getpid()))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(out, []byte(line), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
