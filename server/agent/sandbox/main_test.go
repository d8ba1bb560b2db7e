package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"
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
	os.Exit(m.Run())
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
