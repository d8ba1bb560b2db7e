package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The test server of StartServer in a process of its own, so that what a
// benchmark counts (allocations, CPU) is the client's alone: the test binary
// runs itself with fakeServerEnv set to the server's configuration, and
// TestFakeServerProcess serves.

const fakeServerEnv = "DOCSAPI_BENCH_FAKE_SERVER"

// TestFakeServerProcess is not a test. In the process StartProcessServer
// starts, it serves the API on one local port and what the server counted
// (GET /, JSON Counts) on another, prints both addresses on a line, and
// exits when its standard input closes.
func TestFakeServerProcess(t *testing.T) {
	spec := os.Getenv(fakeServerEnv)
	if spec == "" {
		t.Skip("the test server's own process; StartProcessServer runs it")
	}
	var cfg ServerConfig
	if err := json.Unmarshal([]byte(spec), &cfg); err != nil {
		t.Fatal(err)
	}
	counts := new(serverCounts)
	api, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stats, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: newHandler(cfg, counts), ConnState: counts.connState}
	go srv.Serve(api)
	go http.Serve(stats, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(counts.load())
	}))
	fmt.Printf("%s %s\n", api.Addr(), stats.Addr())
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // before the testing package prints anything
}

// StartProcessServer starts the server of StartServer in a new process.
func StartProcessServer(tb testing.TB, cfg ServerConfig) *Server {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	spec, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestFakeServerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), fakeServerEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	stop := func() {
		stdin.Close()
		cmd.Wait()
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addrs := strings.Fields(line)
	if err != nil || len(addrs) != 2 {
		stop()
		tb.Fatalf("the server's process printed %q: %v", line, err)
	}
	statsURL := "http://" + addrs[1] + "/"
	// A client of its own, so that reading the counts is not counted.
	stats := &http.Client{Transport: &http.Transport{}}
	return &Server{
		URL: "http://" + addrs[0],
		counts: func() Counts {
			var c Counts
			resp, err := stats.Get(statsURL)
			if err != nil {
				tb.Fatal(err)
			}
			defer resp.Body.Close()
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
				tb.Fatal(err)
			}
			return c
		},
		close: func() {
			stats.CloseIdleConnections()
			stop()
		},
	}
}
