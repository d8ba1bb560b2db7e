//go:build unix

package procgroup

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid runs: a zombie (dead, waiting to be reaped by
// whatever adopted it) does not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc here: trust the signal
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// TestKillReachesTheGroup: a child's own child, in the same group, dies
// with one Kill.
func TestKillReachesTheGroup(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & echo $!; wait")
	cmd.SysProcAttr = Attr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	var grandchild int
	for _, c := range strings.TrimSpace(string(buf[:n])) {
		grandchild = grandchild*10 + int(c-'0')
	}
	if err := Kill(cmd.Process); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for alive(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild %d outlived Kill", grandchild)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
