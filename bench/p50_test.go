package bench

import (
	"slices"
	"testing"
	"time"
)

// reportP50 runs op once per iteration of b's loop, failing b at op's
// first error, then reports the median time of a call (p50-ms) and, where
// the process's CPU time can be read, its CPU time per call (cpu-ms/op).
// The wall time counts the waits for a core that a shared machine's other
// work holds; the CPU time does not (nor, on PostgreSQL, the database's
// own).
func reportP50(b *testing.B, op func() error) {
	b.Helper()
	times := make([]time.Duration, 0, 256)
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		t0 := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	cpu1, _ := processCPU()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
	if cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/1e6/float64(len(times)), "cpu-ms/op")
	}
}
