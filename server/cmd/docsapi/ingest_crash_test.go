//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
)

// Bounds of TestKilledServerKeepsAcknowledgedViews.
const (
	crashClients      = 4
	crashBatch        = 100 // views per request, each of its own page
	crashMaxBatches   = 150 // per client: at most 60,000 views in all
	crashKillAfter    = 40  // acknowledged requests before the kill
	crashIngestLimit  = 30 * time.Second
	crashExportPage   = 250
	crashBrowserAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
)

// TestKilledServerKeepsAcknowledgedViews is "kill -9" of serve while
// clients send page views to the ingestion endpoint: every view whose
// request was answered 2xx must be in the export after a restart (an
// acknowledgement is a promise), and no view may be counted twice. Views of
// requests that got no answer may or may not be there. Every view has a
// page of its own, so a view counted twice shows as a page with two.
func TestKilledServerKeepsAcknowledgedViews(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	work := t.TempDir()
	bin := buildDocsapi(ctx, t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "LANG=C.UTF-8", "DOCSAPI_DATA=" + filepath.Join(work, "data")}
	runCLI := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("docsapi %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimSpace(stdout.String())
	}
	runCLI("project", "create", "--id", "handbook", "--repository", "https://git.example.com/handbook.git")
	key := runCLI("key", "create", "--project", "handbook", "--scope", "write", "--name", "ingest-crash")
	// The default flush interval (10 s) is far longer than the test: a
	// view held in memory until a flush is lost to the kill.
	args := []string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}

	srv := startServe(ctx, t, bin, env, args...)
	url := "http://" + srv.addr + "/v1/analytics/handbook/views"
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: crashClients}, Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()

	var sent, acked, ackedRequests atomic.Int64
	var refused sync.Map // status → count, for the log: answers neither 2xx nor a lost connection
	stop := make(chan struct{})
	var clients sync.WaitGroup
	deadline := time.Now().Add(crashIngestLimit)
	for c := range crashClients {
		clients.Go(func() {
			for b := 0; b < crashMaxBatches && time.Now().Before(deadline); b++ {
				select {
				case <-stop:
					return
				default:
				}
				views := make([]string, crashBatch)
				for v := range views {
					views[v] = fmt.Sprintf(`{"path": "/c%d/b%d/v%d", "userAgent": %q}`, c, b, v, crashBrowserAgent)
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"views": [`+strings.Join(views, ",")+`]}`))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				// Sent as soon as the request may reach the server: a
				// request without an answer may still have been stored.
				sent.Add(crashBatch)
				resp, err := hc.Do(req)
				if err != nil {
					return // the server is gone
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					acked.Add(crashBatch)
					ackedRequests.Add(1)
					continue
				}
				n, _ := refused.LoadOrStore(resp.StatusCode, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
		})
	}

	// Kill the server in the middle of the traffic: once enough requests
	// were acknowledged, while the clients keep sending.
	for ackedRequests.Load() < crashKillAfter && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.cmd.Process.Kill(); err != nil { // SIGKILL: nothing is flushed
		t.Fatal(err)
	}
	<-srv.done
	close(stop)
	clients.Wait()
	refused.Range(func(status, n any) bool {
		t.Logf("%d requests answered %d", n.(*atomic.Int64).Load(), status)
		return true
	})
	if ackedRequests.Load() < crashKillAfter {
		t.Fatalf("only %d requests were acknowledged in %s; server log:\n%s", ackedRequests.Load(), crashIngestLimit, srv.logs())
	}

	srv = startServe(ctx, t, bin, env, args...)
	defer srv.stop(t, 30*time.Second)
	exported, pages := exportAllViews(ctx, t, "http://"+srv.addr+"/v1/analytics/handbook/views", key)
	t.Logf("sent %d views, %d acknowledged; %d exported after the restart", sent.Load(), acked.Load(), exported)
	for path, n := range pages {
		if n != 1 {
			t.Errorf("page %s has %d views, want 1: a view was counted twice", path, n)
		}
	}
	if exported < acked.Load() {
		t.Errorf("exported %d views, fewer than the %d acknowledged: %d acknowledged views were lost", exported, acked.Load(), acked.Load()-exported)
	}
	if exported > sent.Load() {
		t.Errorf("exported %d views, more than the %d sent", exported, sent.Load())
	}
}

// exportAllViews pages through the export (offset and limit) and returns the
// views in all, checked against the totals of the answer, and each page's
// views by path.
func exportAllViews(ctx context.Context, t *testing.T, url, key string) (int64, map[string]int64) {
	t.Helper()
	pages := map[string]int64{}
	var total, sum int64
	for offset := 0; ; offset += crashExportPage {
		status, body := apiCall(ctx, t, http.MethodGet, fmt.Sprintf("%s?limit=%d&offset=%d", url, crashExportPage, offset), key, "")
		if status != http.StatusOK {
			t.Fatalf("export at offset %d: %d %s", offset, status, body)
		}
		var page docsapi.ViewsPage
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatalf("export at offset %d: %v", offset, err)
		}
		total = page.Totals.Total
		for _, v := range page.Views {
			if _, dup := pages[v.Path]; dup {
				t.Fatalf("page %s is in the export twice", v.Path)
			}
			pages[v.Path] = v.Total
			sum += v.Total
		}
		if !page.HasMore || len(page.Views) == 0 {
			break
		}
		if offset > 1_000_000 {
			t.Fatal("the export does not end")
		}
	}
	if sum != total {
		t.Errorf("the export's pages sum to %d views, its totals say %d", sum, total)
	}
	return sum, pages
}
