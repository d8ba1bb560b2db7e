package docsapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// poisonBodyPool overwrites every byte of the buffers the pool hands out, as
// the next response read into them would, and makes them large enough for
// every body of these tests, so that each one is read into a released
// buffer. A result that still pointed into a released buffer would then
// read '#' or another body. sync.Pool gives no guarantee of which buffers
// come back (the race detector even drops some on Put), so this can miss a
// reuse, but it cannot make a correct pipeline fail.
func poisonBodyPool() {
	var bufs []*[]byte
	for range 4 {
		buf := bodyPool.Get().(*[]byte)
		if cap(*buf) < 4096 {
			*buf = make([]byte, 0, 4096)
		}
		full := (*buf)[:cap(*buf)]
		for i := range full {
			full[i] = '#'
		}
		bufs = append(bufs, buf)
	}
	for _, buf := range bufs {
		bodyPool.Put(buf)
	}
}

func completedJobJSON(id, createdAt string) string {
	return `{"id":"` + id + `","status":"completed","source":{"repository":"acme/docs-` + id + `","ref":"br-` + id +
		`"},"model":"m-` + id + `","prLink":"https://example.test/pr/` + id + `","createdAt":"` + createdAt + `","archivedAt":null}`
}

// heldResult is a result of the pipeline and a copy of what it must hold.
type heldResult struct {
	got  any
	want any
}

// errorTexts pairs err with the text of every error in its chain, as printed
// now. Each level counts: a wrapping error prints a copy of the inner
// message, so a wrapped error that pointed into the body would not show in
// the outer message.
func errorTexts(err error) heldResult {
	text := func() string {
		var b strings.Builder
		for e := err; e != nil; e = errors.Unwrap(e) {
			b.WriteString(e.Error())
			b.WriteByte('\n')
		}
		return b.String()
	}
	return heldResult{text, text()}
}

// Every kind of result the pipeline builds from a body (a job, a page, an
// API error from JSON, HTML or text, a decoding error) must stay as it was
// after later responses have been read into the released buffers.
func TestPooledBodiesAreNotKeptByResults(t *testing.T) {
	c, mt := newTestClient(t, WithMaxRetries(0))
	ctx := context.Background()
	params := ViewsParams{DateFrom: Day(2026, 1, 1), DateTo: Day(2026, 2, 1)}

	var results []heldResult
	poisonBodyPool()
	for i := range 20 {
		n := fmt.Sprintf("%02d", i) // equal lengths, so buffers fit and are reused
		id := "j" + n

		mt.RegisterResponder(http.MethodGet, testBaseURL+"/v2/agent/proj/job/"+id,
			replyAs(200, "application/json", completedJobJSON(id, "2026-08-01T12:00:"+n+"Z")))
		job, err := c.AgentJobs.Get(ctx, "", id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		want := &Job{ID: id, Status: JobStatusCompleted, Source: JobSource{Repository: "acme/docs-" + id, Ref: "br-" + id},
			Model: "m-" + id, PRLink: "https://example.test/pr/" + id, CreatedAt: job.CreatedAt}
		results = append(results, heldResult{job, want})
		poisonBodyPool()

		mt.RegisterResponder(http.MethodGet, viewsURL, replyAs(200, "application/json",
			`{"totals":{"human":1,"ai":0,"total":1},"views":[{"path":"/p`+n+`","human":1,"ai":0,"total":1}],"hasMore":false}`))
		page, err := c.Analytics.Views(ctx, "", params)
		if err != nil {
			t.Fatalf("Views: %v", err)
		}
		results = append(results, heldResult{page, &ViewsPage{Totals: ViewCounts{Human: 1, Total: 1},
			Views: []PageView{{Path: "/p" + n, Human: 1, Total: 1}}}})
		poisonBodyPool()

		for _, tt := range []struct {
			status      int
			contentType string
			body        string
			message     string
			details     []ErrorDetail
		}{
			{400, "application/json", `{"error":"bad ` + n + `","details":[{"message":"d` + n + `"},"s` + n + `"]}`,
				"bad " + n, []ErrorDetail{{Message: "d" + n}, {Message: "s" + n}}},
			{404, "application/json", `{"error":{"message":"gone ` + n + `"}}`, "gone " + n, nil},
			{502, "text/html", `<html><title>Gateway ` + n + `</title></html>`, "non-JSON text/html response: Gateway " + n, nil},
			{503, "text/plain", `down for ` + n + ` minutes`, "non-JSON text/plain response: down for " + n + " minutes", nil},
		} {
			mt.RegisterResponder(http.MethodGet, testBaseURL+"/v2/agent/proj/job/"+id, replyAs(tt.status, tt.contentType, tt.body))
			_, err := c.AgentJobs.Get(ctx, "", id)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			want := &APIError{StatusCode: tt.status, Method: http.MethodGet, Path: "/v2/agent/proj/job/" + id,
				Body: tt.body, Message: tt.message, Details: tt.details}
			if diff := cmp.Diff(want, apiErr); diff != "" {
				t.Fatalf("APIError (-want +got):\n%s", diff)
			}
			results = append(results, heldResult{apiErr, want}, errorTexts(err))
			poisonBodyPool()
		}

		// Decoding errors quote the body; the quote must be a copy too.
		mt.RegisterResponder(http.MethodGet, viewsURL, replyAs(200, "application/json",
			`{"totals":{"human":1.5`+n+`,"ai":0,"total":1},"views":[],"hasMore":false}`))
		_, err = c.Analytics.Views(ctx, "", params)
		if err == nil || !strings.Contains(err.Error(), "1.5"+n) {
			t.Fatalf("err = %v, want a decoding error quoting 1.5%s", err, n)
		}
		results = append(results, errorTexts(err))
		mt.RegisterResponder(http.MethodGet, testBaseURL+"/v2/agent/proj/job/"+id,
			replyAs(200, "application/json", completedJobJSON(id, "not a time "+n)))
		_, err = c.AgentJobs.Get(ctx, "", id)
		if err == nil || !strings.Contains(err.Error(), "not a time "+n) {
			t.Fatalf("err = %v, want a decoding error quoting the timestamp", err)
		}
		results = append(results, errorTexts(err))
		poisonBodyPool()
	}

	for i, r := range results {
		got := r.got
		if f, ok := got.(func() string); ok {
			got = f()
		}
		if diff := cmp.Diff(r.want, got); diff != "" {
			t.Errorf("result %d changed after later requests (-want +got):\n%s", i, diff)
		}
	}
}

// Calls in flight at once each read into a buffer of their own: under the
// race detector, a buffer released while another call still used it would
// be reported, and its result would be wrong here.
func TestPooledBodiesConcurrentCalls(t *testing.T) {
	c, mt := newTestClient(t)
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		id := req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:]
		return replyAs(200, "application/json", completedJobJSON(id, "2026-08-01T12:00:00Z"))(req)
	})
	const workers, calls = 8, 50
	jobs := make([][]*Job, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				id := fmt.Sprintf("w%d-%03d", w, i)
				job, err := c.AgentJobs.Get(context.Background(), "", id)
				if err != nil {
					t.Errorf("Get(%s): %v", id, err)
					return
				}
				if job.ID != id || job.Model != "m-"+id {
					t.Errorf("Get(%s) = %+v", id, job)
				}
				jobs[w] = append(jobs[w], job)
			}
		})
	}
	wg.Wait()
	for w := range jobs {
		for i, job := range jobs[w] {
			if id := fmt.Sprintf("w%d-%03d", w, i); job.ID != id || job.Source.Ref != "br-"+id {
				t.Errorf("job %s changed after later calls: %+v", id, job)
			}
		}
	}
}

// paddedJobBody is a response body of size bytes: a job, then spaces.
type paddedJobBody struct {
	r    io.Reader
	read int64
}

func newPaddedJobBody(size int64) *paddedJobBody {
	job := strings.NewReader(jobJSONJ1)
	spaces := io.LimitReader(spaces{}, size-int64(job.Len()))
	return &paddedJobBody{r: io.MultiReader(job, spaces)}
}

func (b *paddedJobBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

func (b *paddedJobBody) Close() error { return nil }

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// The declared length only sizes the buffer: whatever it says, the body
// is read to its end, a body of exactly the bound is accepted, and one byte
// more is refused after reading just that byte.
func TestReadBodyBoundDoesNotTrustTheDeclaredLength(t *testing.T) {
	const limit = maxResponseBytes
	for _, tt := range []struct {
		name     string
		declared int64
		size     int64
		oneByte  bool // the transport returns one byte per Read
	}{
		{"unknown length", -1, int64(len(jobJSONJ1)), true},
		{"declared too short", 10, int64(len(jobJSONJ1)), true},
		{"declared too long", 4096, int64(len(jobJSONJ1)), false},
		{"exactly the bound", limit, limit, false},
		{"one byte past the bound, declared as the bound", limit, limit + 1, false},
		{"past the bound, unknown length", -1, limit + 100, false},
		{"past the bound, declared past it", 1 << 40, limit + 100, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t, WithMaxRetries(0))
			body := newPaddedJobBody(tt.size)
			mt.RegisterResponder(http.MethodGet, jobURLJ1, func(req *http.Request) (*http.Response, error) {
				var r io.ReadCloser = body
				if tt.oneByte {
					r = io.NopCloser(iotest.OneByteReader(body))
				}
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
					ContentLength: tt.declared, Body: r, Request: req}, nil
			})
			job, err := c.AgentJobs.Get(context.Background(), "", "j1")
			if tt.size > limit {
				if err == nil || !strings.Contains(err.Error(), "larger than 33554432 bytes") {
					t.Fatalf("err = %v, want a body-too-large error", err)
				}
				if body.read != limit+1 {
					t.Errorf("bytes read = %d, want %d: reading must stop just past the limit", body.read, limit+1)
				}
			} else {
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if diff := cmp.Diff(wantJobJ1, job); diff != "" {
					t.Errorf("job (-want +got):\n%s", diff)
				}
				if body.read != tt.size {
					t.Errorf("bytes read = %d, want %d", body.read, tt.size)
				}
			}
			// The large buffer was dropped, not kept for the next response.
			if buf := bodyPool.Get().(*[]byte); cap(*buf) > maxPooledBody {
				t.Errorf("pool holds a buffer of %d bytes, want at most %d", cap(*buf), maxPooledBody)
			}
		})
	}
}

// A released buffer is used again for the next body that fits in it,
// whether the length was declared or not. sync.Pool may drop a buffer (the
// race detector drops some on purpose), so some of the tries must reuse it,
// not all.
func TestReadBodyReusesReleasedBuffers(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 64<<10)
	for _, declared := range []int64{int64(len(data)), -1} {
		read := func() *[]byte {
			t.Helper()
			buf, err := readBody(&http.Response{ContentLength: declared, Body: io.NopCloser(bytes.NewReader(data))})
			if err != nil || !bytes.Equal(*buf, data) {
				t.Fatalf("readBody = %d bytes, %v; want the %d bytes sent", len(*buf), err, len(data))
			}
			return buf
		}
		reused := 0
		for range 20 {
			first := read()
			array := &(*first)[0]
			releaseBody(first)
			second := read()
			if &(*second)[0] == array {
				reused++
			}
			releaseBody(second)
		}
		if reused == 0 {
			t.Errorf("declared length %d: no released buffer was reused in 20 tries", declared)
		}
	}
}
