package bench

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// callerCounts are the concurrencies the throughput benchmarks run at: one
// caller in a plain loop, then RunParallel with its default parallelism
// (GOMAXPROCS goroutines) and with four times that, to see whether callers
// beyond the cores still add throughput or only queue.
func callerCounts() []int {
	procs := runtime.GOMAXPROCS(0)
	return []int{1, procs, 4 * procs}
}

func callersName(n int) string { return fmt.Sprintf("callers=%d", n) }

// runCallers calls op b.N times in all, from the given number of
// concurrent callers (1: b.Loop; more: RunParallel, callers being a multiple
// of GOMAXPROCS as callerCounts makes them). Every call gets its own index
// from 0 to b.N-1, so that callers can derive what to ask for and what to
// expect from it. The first error fails the benchmark; op must not call
// b.Fatal itself, since it may run on another goroutine. Afterwards the
// timer is stopped, and the throughput (calls per second of wall time) is
// reported under unit, with the process's CPU time per call (client and
// server together, since both run in this process): on a shared machine
// the wall time also counts the waits for a core that other work holds,
// the CPU time does not.
func runCallers(b *testing.B, callers int, unit string, op func(i int) error) {
	b.Helper()
	var next atomic.Int64
	cpu0, cpuOK := processCPU()
	if callers == 1 {
		for b.Loop() {
			if err := op(int(next.Add(1) - 1)); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(callers / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := op(int(next.Add(1) - 1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.StopTimer()
		if b.Failed() {
			b.FailNow()
		}
	}
	if got := int(next.Load()); got != b.N {
		b.Fatalf("made %d calls, want b.N = %d", got, b.N)
	}
	cpu1, _ := processCPU()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
	if cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	}
}
