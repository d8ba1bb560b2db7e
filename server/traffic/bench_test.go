package traffic_test

import (
	"net/http/httptest"
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

// benchInputs are the cases the benchmarks time and the allocation test
// checks: the common human case, a long user agent, an agent, curl, and
// the Markdown paths through the features.
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

// TestClassifyDoesNotAllocate: the classifier runs inside a middleware
// that must not allocate, so zero allocations is part of its contract.
func TestClassifyDoesNotAllocate(t *testing.T) {
	c := traffic.Default()
	for _, in := range benchInputs {
		if n := testing.AllocsPerRun(100, func() { c.Classify(in.ua, in.path, in.accept) }); n != 0 {
			t.Errorf("Classify(%s) allocates %.1f times per call", in.name, n)
		}
	}
	r := httptest.NewRequest("GET", "/quickstart.md", nil)
	r.Header.Set("User-Agent", uaChrome)
	r.Header.Add("Accept", "text/html;q=0.9")
	r.Header.Add("Accept", "text/markdown")
	if n := testing.AllocsPerRun(100, func() { c.ClassifyRequest(r) }); n != 0 {
		t.Errorf("ClassifyRequest allocates %.1f times per call", n)
	}
}

var sink traffic.Class

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

func BenchmarkClassifyRequest(b *testing.B) {
	c := traffic.Default()
	r := httptest.NewRequest("GET", "/quickstart", nil)
	r.Header.Set("User-Agent", uaChrome)
	r.Header.Set("Accept", browserAccept)
	b.ReportAllocs()
	for b.Loop() {
		sink = c.ClassifyRequest(r)
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
