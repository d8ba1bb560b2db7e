package metrics_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/metrics"
)

// newMetrics returns the Metrics of cfg, which must be valid.
func newMetrics(t *testing.T, cfg metrics.Config) *metrics.Metrics {
	t.Helper()
	m, err := metrics.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scrape serves one scrape of h and returns its samples, keyed by series as
// the text format writes them (name{label="value",...}, labels sorted).
func scrape(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("scrape: status %d: %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape: Content-Type %q, want the text format", ct)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Label values may hold spaces (routes do); the value is last.
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("scrape: unreadable line %q", line)
		}
		samples[line[:i]] = v
	}
	return samples
}

// series returns the series of samples named name (without the suffixes of
// a histogram's parts).
func series(samples map[string]float64, name string) []string {
	var out []string
	for s := range samples {
		if n, _, _ := strings.Cut(s, "{"); n == name {
			out = append(out, s)
		}
	}
	return out
}

// want checks the value of one series.
func want(t *testing.T, samples map[string]float64, series string, value float64) {
	t.Helper()
	got, ok := samples[series]
	switch {
	case !ok:
		t.Errorf("no series %s", series)
	case got != value:
		t.Errorf("%s = %v, want %v", series, got, value)
	}
}
