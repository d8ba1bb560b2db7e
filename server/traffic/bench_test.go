package traffic_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

// benchInputs are the cases the benchmarks time: the common human case, a
// long user agent, an agent, curl, and the Markdown paths through the
// features.
var benchInputs = []struct {
	name, ua, path, accept string
}{
	{"chrome", uaChrome, "/quickstart", browserAccept},
	{"long", uaLong, "/quickstart", browserAccept},
	{"agent", uaAgent, "/quickstart", "*/*"},
	{"curl", uaCurl, "/quickstart", "*/*"},
	{"markdown-accept", uaChrome, "/quickstart", "text/html;q=0.9, text/markdown"},
	{"markdown-path", uaCurl, "/docs/quickstart.md", "*/*"},
	{"empty", "", "/llms.txt", ""},
}

var sink traffic.Class

// BenchmarkClassify times Classify on each of benchInputs. The classifier
// runs inside a middleware that must not allocate, so its allocations per
// call (none) are part of its contract: reported here rather than
// asserted by a test, since a Go release may change them.
func BenchmarkClassify(b *testing.B) {
	c := traffic.Default()
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = c.Classify(in.ua, in.path, in.accept)
			}
		})
	}
}

// BenchmarkClassifyAgent times ClassifyAgent, which names the deciding
// rule with one more load than Classify, on each of benchInputs; it
// allocates nothing either.
func BenchmarkClassifyAgent(b *testing.B) {
	c := traffic.Default()
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink, nameSink = c.ClassifyAgent(in.ua, in.path, in.accept)
			}
		})
	}
}

var nameSink string

// BenchmarkClassifyRequest times ClassifyRequest, which reads the request's
// headers without allocating: a browser's request for a page, and one for
// a Markdown page whose Accept is split over two header lines.
func BenchmarkClassifyRequest(b *testing.B) {
	c := traffic.Default()
	html := httptest.NewRequest("GET", "/quickstart", nil)
	html.Header.Set("User-Agent", uaChrome)
	html.Header.Set("Accept", browserAccept)
	markdown := httptest.NewRequest("GET", "/quickstart.md", nil)
	markdown.Header.Set("User-Agent", uaChrome)
	markdown.Header.Add("Accept", "text/html;q=0.9")
	markdown.Header.Add("Accept", "text/markdown")
	for _, bench := range []struct {
		name string
		r    *http.Request
	}{{"html", html}, {"markdown-two-accept-lines", markdown}} {
		b.Run(bench.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = c.ClassifyRequest(bench.r)
			}
		})
	}
}

// BenchmarkParseDefault times building a classifier from the default
// rules, which a server does once at start-up.
func BenchmarkParseDefault(b *testing.B) {
	data := traffic.Default().Rules()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := traffic.New(data); err != nil {
			b.Fatal(err)
		}
	}
}
