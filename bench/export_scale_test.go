package bench

import (
	"fmt"
	"testing"

	docsapi "github.com/docsapi/docsapi-go"
)

// How the full export's cost grows with the project: the export of
// BenchmarkExport (same server latency, the SDK's default HTTP client) at
// 1,000, 10,000 and 100,000 paths, sequential and with WithPrefetch(8). Run
// it with -benchtime 1x: one export per run; -short leaves out 100,000.
func BenchmarkExportScale(b *testing.B) {
	for _, paths := range []int{1_000, 10_000, 100_000} {
		srv := StartServer(ServerConfig{Paths: paths, Latency: exportLatency})
		c := newSDK(b, srv.URL, nil)
		for _, mode := range []struct {
			name string
			opts []docsapi.RequestOption
		}{
			{name: "sequential"},
			{name: "prefetch8", opts: []docsapi.RequestOption{docsapi.WithPrefetch(exportPrefetch)}},
		} {
			b.Run(fmt.Sprintf("paths=%d/mode=%s", paths, mode.name), func(b *testing.B) {
				if paths > 20_000 && testing.Short() {
					b.Skip("400 pages at 20 ms each; skipped with -short")
				}
				benchExport(b, srv, paths, sdkExport(c, mode.opts, false))
			})
		}
		srv.Close()
	}
}
