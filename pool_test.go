package docsapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// idleConns counts, through httptrace, the connections the transport put
// back into its pool after a response and those it closed instead (its
// PutIdleConn hook reports an error when the pool is full).
type idleConns struct {
	kept, closed atomic.Int64
	events       chan struct{}
}

func newIdleConns() *idleConns { return &idleConns{events: make(chan struct{}, 1024)} }

func (ic *idleConns) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		PutIdleConn: func(err error) {
			if err != nil {
				ic.closed.Add(1)
			} else {
				ic.kept.Add(1)
			}
			ic.events <- struct{}{}
		},
	})
}

// wait returns once n connections went back or were closed: the transport
// does it after the body was read, on a goroutine of its own.
func (ic *idleConns) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-ic.events:
		case <-t.Context().Done():
			t.Fatal("the transport did not return every connection")
		}
	}
}

// The default client keeps a connection for each request a prefetching
// export may have in flight. go-cleanhttp's pool keeps GOMAXPROCS+1 idle
// connections a host and closed the others as their requests ended, so
// every round of pages dialled (and over TLS, shook hands) again.
func TestDefaultTransportKeepsAConnectionForEveryPageInFlight(t *testing.T) {
	var arrived atomic.Int64
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Hold every request until all of them arrived, so that each had
		// a connection of its own.
		if arrived.Add(1) == maxPrefetch {
			close(all)
		}
		select {
		case <-all:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"totals":{"human":1,"ai":0,"total":1},"views":[],"hasMore":false}`)
	}))
	defer srv.Close()
	c, err := NewClient(testKey, WithBaseURL(srv.URL), WithProjectID("proj"))
	if err != nil {
		t.Fatal(err)
	}
	conns := newIdleConns()
	ctx := conns.trace(t.Context())
	var wg sync.WaitGroup
	for range maxPrefetch {
		wg.Go(func() {
			if _, err := c.Analytics.Views(ctx, "", ViewsParams{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	conns.wait(t, maxPrefetch)
	if kept, closed := conns.kept.Load(), conns.closed.Load(); kept != maxPrefetch || closed != 0 {
		t.Errorf("%d connections kept and %d closed after %d requests at once, want all kept", kept, closed, maxPrefetch)
	}
	tr := c.cfg.httpClient.Transport.(*http.Transport)
	if tr.MaxIdleConnsPerHost < maxPrefetch || tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("idle connections: %d a host, %d in all; want at least %d", tr.MaxIdleConnsPerHost, tr.MaxIdleConns, maxPrefetch)
	}
	if c.cfg.httpClient.Timeout != DefaultTimeout {
		t.Errorf("Timeout = %v, want %v", c.cfg.httpClient.Timeout, DefaultTimeout)
	}
}

// A caller's own client is never changed, its transport included.
func TestWithHTTPClientKeepsTheCallersPool(t *testing.T) {
	tr := &http.Transport{MaxIdleConnsPerHost: 2}
	if _, err := NewClient(testKey, WithHTTPClient(&http.Client{Transport: tr})); err != nil {
		t.Fatal(err)
	}
	if tr.MaxIdleConnsPerHost != 2 || tr.MaxIdleConns != 0 {
		t.Errorf("the caller's transport changed: %d idle a host, %d in all", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
}

// A prefetching export over the default client, against a real server:
// no page past the end is requested, so none is cancelled, and every
// connection goes back to the pool for the next export.
func TestPrefetchExportKeepsItsConnections(t *testing.T) {
	const rows, limit = 2000, 100
	var requests, pastEnd atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		if offset >= rows {
			pastEnd.Add(1)
		}
		// Rows sorted by views, largest first: row i has rows-i.
		var b strings.Builder
		fmt.Fprintf(&b, `{"totals":{"human":%d,"ai":0,"total":%[1]d},"views":[`, rows*(rows+1)/2)
		for i := offset; i < min(offset+limit, rows); i++ {
			if i > offset {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"path":"/p%d","human":%d,"ai":0,"total":%[2]d}`, i, rows-i)
		}
		fmt.Fprintf(&b, `],"hasMore":%v}`, offset+limit < rows)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, b.String())
	}))
	defer srv.Close()
	c, err := NewClient(testKey, WithBaseURL(srv.URL), WithProjectID("proj"))
	if err != nil {
		t.Fatal(err)
	}
	conns := newIdleConns()
	for export := range 2 {
		got, err := Collect(c.Analytics.AllViews(conns.trace(t.Context()), "", ViewsParams{Limit: limit}, WithPrefetch(8)))
		if err != nil || len(got) != rows {
			t.Fatalf("export %d: %d rows, %v", export, len(got), err)
		}
	}
	if n := pastEnd.Load(); n != 0 {
		// Cancelled, their connections were closed without going back.
		t.Fatalf("%d requests past the last page, want none", n)
	}
	conns.wait(t, int(requests.Load()))
	if closed := conns.closed.Load(); closed != 0 {
		t.Errorf("%d connections closed after their request, want all kept", closed)
	}
}
