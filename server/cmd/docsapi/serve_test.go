package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer that serve's goroutines may write while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listeningRE = regexp.MustCompile(`"msg":"docsapi: listening","addr":"([^"]+)"`)

// serveInProcess runs serve in a goroutine until the returned stop function
// cancels it; stop returns the exit code.
func serveInProcess(t *testing.T, env map[string]string, args ...string) (addr string, logs *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	logs = &syncBuffer{}
	done := make(chan int, 1)
	getenv := func(k string) string { return env[k] }
	go func() {
		done <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...), strings.NewReader(""), &bytes.Buffer{}, logs, getenv)
	}()
	stop = func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not stop within 30s of its context ending:\n%s", logs)
		}
		return -1
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(logs.String()); m != nil {
			return m[1], logs, stop
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before listening:\n%s", code, logs)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not listen in time:\n%s", logs)
		}
	}
}

func TestServeSyncsProjectsAndStopsGracefully(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed") // the runner checks git at start-up
	}
	data := t.TempDir()
	env := map[string]string{"DOCSAPI_DATA": data, "HOME": t.TempDir()}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/old.git", "--model", "old-model", "--name", "Handbook").expect(t, exitOK)
	runCLI(t, env, "", "project", "create", "--id", "orphan", "--repository", "https://git.example.com/orphan.git").expect(t, exitOK)
	// No job runs: the test is about the projects' sync and the stop, not
	// the sandbox, which is off.
	config := configFile(t, `{"projects": [
	  {"id": "handbook", "repository": "https://git.example.com/new.git", "ref": "main", "model": "new-model",
	   "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": "off"}},
	  {"id": "extra", "name": "Extra", "repository": "https://git.example.com/extra.git",
	   "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": "off"}}]}`)

	addr, logs, stop := serveInProcess(t, env, "--config", config)
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v, %v", resp, err)
	}
	resp.Body.Close()
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, logs)
	}
	for _, want := range []string{
		`"msg":"docsapi: project updated from the configuration","project_id":"handbook"`,
		`"msg":"docsapi: project created from the configuration","project_id":"extra"`,
		`its jobs will fail until it is added","project_id":"orphan"`,
		`"msg":"docsapi: shutting down"`, `"msg":"docsapi: stopped"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}

	r := runCLI(t, env, "", "project", "list", "--format", "json")
	r.expect(t, exitOK)
	got := map[string]projectJSON{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var p projectJSON
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		got[p.ID] = p
	}
	// The configuration's repository, ref and model win; a name it does not
	// give stays.
	if h := got["handbook"]; h.Repository != "https://git.example.com/new.git" || h.Ref != "main" || h.Model != "new-model" || h.Name != "Handbook" {
		t.Errorf("handbook after the sync: %+v", h)
	}
	if e := got["extra"]; e.Name != "Extra" || e.Repository != "https://git.example.com/extra.git" {
		t.Errorf("extra: %+v", e)
	}
	if o := got["orphan"]; o.Repository != "https://git.example.com/orphan.git" {
		t.Errorf("orphan was changed: %+v", o)
	}
}

func TestServeWithoutProjectsServesTheAPI(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir()}
	addr, logs, stop := serveInProcess(t, env, "--data", t.TempDir())
	resp, err := http.Get("http://" + addr + "/openapi.yaml")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("openapi.yaml: %v, %v", resp, err)
	}
	resp.Body.Close()
	if code := stop(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, logs)
	}
	if !strings.Contains(logs.String(), "no project is configured") {
		t.Errorf("no warning about the missing projects:\n%s", logs)
	}
}

func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSignedCert(t)
	cert := writeFile(t, filepath.Join(dir, "cert.pem"), string(certPEM))
	key := writeFile(t, filepath.Join(dir, "key.pem"), string(keyPEM))
	addr, logs, stop := serveInProcess(t, map[string]string{"HOME": dir}, "--data", filepath.Join(dir, "data"), "--tls-cert", cert, "--tls-key", key)
	if !strings.Contains(logs.String(), `"url":"https://`) {
		t.Errorf("the log does not show an https URL:\n%s", logs)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz over TLS: %v, %v", resp, err)
	}
	resp.Body.Close()
	client.CloseIdleConnections()
	if code := stop(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, logs)
	}

	// A key that does not match fails before anything starts.
	other, _ := selfSignedCert(t)
	bad := writeFile(t, filepath.Join(dir, "other.pem"), string(other))
	r := runCLI(t, map[string]string{"HOME": dir}, "", "serve", "--data", filepath.Join(dir, "data"), "--tls-cert", bad, "--tls-key", key)
	r.expect(t, exitFailure, "loading the TLS certificate and key")
}

func selfSignedCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "docsapi test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func TestServeRefusesAnInvalidProjectID(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// The sandbox is off: the test is about the refusal of the ID, which
	// must not wait on whether this machine can run the sandbox.
	config := configFile(t, `{"projects": [{"id": "bad id", "repository": "https://git.example.com/r.git",
	  "host": {"kind": "push-only"}, "agent": {"kind": "command", "command": "sh", "sandbox": "off"}}]}`)
	r := runCLI(t, nil, "", "serve", "--config", config, "--data", t.TempDir(), "--listen", "127.0.0.1:0")
	r.expect(t, exitFailure, config, `project ID "bad id" must be 1 to 64 letters`)
}
