// Package backoff holds the delay arithmetic shared by request retries and
// the job poller. Every function is pure: randomness comes in as an argument,
// so the schedules can be checked with table tests.
package backoff

import "time"

// Exponential returns the delay before retry number attempt (1 for the first
// retry) of a schedule that starts at base, doubles each time and never
// exceeds max.
//
// The delay is "equal jitter": half of the exponential step is fixed and the
// other half is scaled by jitter, a number in [0, 1). The fixed half keeps
// every wait at least base/2 long, so a herd of clients never hammers the
// server with near-zero delays, while the random half spreads the herd out.
// A jitter outside [0, 1) is clamped into it.
func Exponential(attempt int, base, max time.Duration, jitter float64) time.Duration {
	if base <= 0 || max <= 0 {
		return 0
	}
	if base > max {
		base = max
	}
	step := base
	for i := 1; i < attempt && step < max; i++ {
		if step > max/2 {
			step = max // doubling would pass max, and could overflow
			break
		}
		step *= 2
	}
	half := step / 2
	return half + time.Duration(float64(step-half)*clamp01(jitter))
}

// Between returns min + (max-min)*jitter: a delay picked in [min, max) by a
// jitter in [0, 1). It is used when a schedule has a floor it must honour,
// such as the poller's minimum interval. A jitter outside [0, 1) is clamped,
// and max below min yields min.
func Between(min, max time.Duration, jitter float64) time.Duration {
	if max <= min {
		return min
	}
	return min + time.Duration(float64(max-min)*clamp01(jitter))
}

func clamp01(f float64) float64 {
	switch {
	case f != f || f < 0: // NaN or negative
		return 0
	case f >= 1:
		// Keep just under 1 so the result stays inside a half-open range.
		return 0.9999999999
	}
	return f
}
