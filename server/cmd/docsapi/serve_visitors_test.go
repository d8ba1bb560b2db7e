package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// visitorsSink keeps the visitor sketches a recorder writes, by path.
type visitorsSink struct {
	mu    sync.Mutex
	human map[string][]byte
}

func (s *visitorsSink) AddViews(context.Context, []store.ViewCount) error { return nil }

func (s *visitorsSink) AddVisitors(_ context.Context, counts []store.VisitorCount) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range counts {
		s.human[c.Path] = c.Human
	}
	return nil
}

func (s *visitorsSink) VisitorSalt(context.Context, time.Time) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Repeat([]byte{7}, store.VisitorSaltBytes), nil
}

// serve gives the recorder its "trustedProxies": a request through a
// trusted proxy is the forwarded client's visitor, and a request from any
// other peer is the peer's, whatever its headers say. Each page below gets
// one visitor, so that its sketch is a function of that visitor alone:
// equal sketches, the same visitor.
func TestServeRecorderTrustsTheConfiguredProxies(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := &serveFlags{}
	f.register(fs)
	if err := fs.Parse([]string{"--config", configFile(t, `{"trustedProxies": ["10.0.0.0/8"]}`)}); err != nil {
		t.Fatal(err)
	}
	set, err := f.resolve(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	sink := &visitorsSink{human: map[string][]byte{}}
	cfg := set.recorderConfig(sink, slog.New(slog.DiscardHandler))
	cfg.FlushInterval = 10 * time.Millisecond
	rec, err := pageviews.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec.Start()
	mw, err := rec.Middleware(pageviews.MiddlewareConfig{Project: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	site := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("page")) }))
	get := func(path, peer, forwardedFor string) {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = peer + ":40000"
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0")
		if forwardedFor != "" {
			req.Header.Set("X-Forwarded-For", forwardedFor)
		}
		site.ServeHTTP(httptest.NewRecorder(), req)
	}
	// The salt comes from the flush goroutine: wait until a view counts
	// its visitor.
	for i := 0; ; i++ {
		before := rec.Stats().NoSalt
		get(fmt.Sprintf("/warm-up/%d", i), "198.51.100.1", "")
		if rec.Stats().NoSalt == before {
			break
		}
		if i > 500 {
			t.Fatal("the recorder got no salt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	get("/direct-client-1", "192.0.2.1", "")
	get("/proxied-client-1", "10.0.0.1", "192.0.2.1")
	get("/proxied-client-2", "10.0.0.1", "192.0.2.2")
	get("/forged-1", "203.0.113.1", "192.0.2.1")
	get("/forged-2", "203.0.113.1", "192.0.2.2")
	get("/direct-forger", "203.0.113.1", "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	got := sink.human
	for _, p := range []string{"/direct-client-1", "/proxied-client-1", "/proxied-client-2", "/forged-1", "/forged-2", "/direct-forger"} {
		if len(got[p]) == 0 {
			t.Fatalf("no visitor stored for %s: %v", p, got)
		}
	}
	if !bytes.Equal(got["/proxied-client-1"], got["/direct-client-1"]) {
		t.Error("a client through a trusted proxy was not counted as itself")
	}
	if bytes.Equal(got["/proxied-client-1"], got["/proxied-client-2"]) {
		t.Error("two clients through a trusted proxy were counted as one visitor")
	}
	if !bytes.Equal(got["/forged-1"], got["/direct-forger"]) || !bytes.Equal(got["/forged-2"], got["/direct-forger"]) {
		t.Error("an untrusted peer chose its address with X-Forwarded-For")
	}
}
