//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// With -serve the quickstart keeps its server running after the tour: the
// dashboard's address it prints answers, the key it prints signs in and
// shows the project's job, and an interrupt stops it cleanly.
func TestQuickstartServe(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-serve")
	cmd.Env = append(os.Environ(), asMain+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// Read the output up to how to stop, then on to the end in the
	// background.
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	var dashboard, key string
	for !strings.Contains(out.String(), "Stop with Ctrl-C") {
		if !sc.Scan() {
			t.Fatalf("the output ended before saying how to stop: %v\n%s\nstderr:\n%s", sc.Err(), out.String(), stderr.String())
		}
		line := sc.Text()
		out.WriteString(line + "\n")
		if u, ok := strings.CutPrefix(line, "    dashboard: "); ok {
			dashboard = u
		}
		if strings.Contains(line, "sign in with this admin key") && sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			key = strings.TrimSpace(sc.Text())
		}
	}
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		rest <- b.String()
	}()
	if dashboard == "" || !strings.HasPrefix(key, "mint_") {
		t.Fatalf("the output does not show the dashboard and the key:\n%s", out.String())
	}

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v\n%s", u, err, out.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := get(dashboard + "login")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("GET %slogin: %d, without a sign-in form:\n%s", dashboard, code, page)
	}
	resp, err := c.PostForm(dashboard+"login", url.Values{"csrf": {m[1]}, "key": {key}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/api/dashboard/" {
		t.Fatalf("signing in with the printed key: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	code, page = get(dashboard + "projects/" + project + "/jobs")
	link := regexp.MustCompile(`href="(/api/dashboard/projects/` + project + `/jobs/job_[^"]+)"`).FindStringSubmatch(page)
	if code != http.StatusOK || link == nil {
		t.Fatalf("the project's jobs page: %d, without the quickstart's job:\n%s", code, page)
	}
	u, _ := url.Parse(dashboard)
	if code, page := get(u.Scheme + "://" + u.Host + link[1]); code != http.StatusOK || !strings.Contains(page, prompt) {
		t.Errorf("the job's page: %d, without its prompt:\n%s", code, page)
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	tail := <-rest
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after an interrupt: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(tail, "Stopped.") {
		t.Errorf("the output after the interrupt:\n%s", tail)
	}
	if _, err := http.Get(dashboard + "login"); err == nil {
		t.Errorf("the dashboard still answers after the quickstart ended")
	}
}
