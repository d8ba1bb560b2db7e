package backoff

import (
	"math"
	"testing"
	"time"
)

// nearOne is the largest jitter the package lets through: a jitter of 1 or
// more is clamped to it so that the result stays inside a half-open window.
const nearOne = 0.9999999999

func TestExponential(t *testing.T) {
	tests := []struct {
		name      string
		attempt   int
		base, max time.Duration
		jitter    float64
		want      time.Duration
	}{
		{"first retry waits half the base", 1, 100 * time.Millisecond, time.Second, 0, 50 * time.Millisecond},
		{"second retry doubles the step", 2, 100 * time.Millisecond, time.Second, 0, 100 * time.Millisecond},
		{"third retry doubles again", 3, 100 * time.Millisecond, time.Second, 0, 200 * time.Millisecond},
		{"fourth retry doubles again", 4, 100 * time.Millisecond, time.Second, 0, 400 * time.Millisecond},
		{"step that would pass max is capped", 5, 100 * time.Millisecond, time.Second, 0, 500 * time.Millisecond},
		{"far past the cap stays at the cap", 100, 100 * time.Millisecond, time.Second, 0, 500 * time.Millisecond},
		{"step landing exactly on max", 4, 125 * time.Millisecond, time.Second, 0, 500 * time.Millisecond},
		{"jitter one half adds a quarter step", 1, 100 * time.Millisecond, time.Second, 0.5, 75 * time.Millisecond},
		{"jitter one half at the cap", 10, 100 * time.Millisecond, time.Second, 0.5, 750 * time.Millisecond},
		{"jitter near one stays below the step", 1, 100 * time.Millisecond, time.Second, nearOne, 99_999_999},
		{"jitter of exactly one is clamped below one", 1, 100 * time.Millisecond, time.Second, 1, 99_999_999},
		{"jitter above one is clamped", 1, 100 * time.Millisecond, time.Second, 7.5, 99_999_999},
		{"positive infinite jitter is clamped", 1, 100 * time.Millisecond, time.Second, math.Inf(1), 99_999_999},
		{"negative jitter counts as zero", 1, 100 * time.Millisecond, time.Second, -0.3, 50 * time.Millisecond},
		{"negative infinite jitter counts as zero", 1, 100 * time.Millisecond, time.Second, math.Inf(-1), 50 * time.Millisecond},
		{"NaN jitter counts as zero", 1, 100 * time.Millisecond, time.Second, math.NaN(), 50 * time.Millisecond},
		{"base above max is lowered to max", 1, 2 * time.Second, time.Second, 0, 500 * time.Millisecond},
		{"base above max never grows", 3, 2 * time.Second, time.Second, 0, 500 * time.Millisecond},
		{"base equal to max", 1, time.Second, time.Second, 0, 500 * time.Millisecond},
		{"attempt zero is treated as the first", 0, 100 * time.Millisecond, time.Second, 0, 50 * time.Millisecond},
		{"negative attempt is treated as the first", -5, 100 * time.Millisecond, time.Second, 0, 50 * time.Millisecond},
		{"zero base means no delay", 3, 0, time.Second, 0.5, 0},
		{"negative base means no delay", 3, -time.Second, time.Second, 0.5, 0},
		{"zero max means no delay", 3, time.Second, 0, 0.5, 0},
		{"negative max means no delay", 3, time.Second, -time.Second, 0.5, 0},
		{"odd step: the fixed half rounds down", 1, 3, time.Second, 0, 1},
		{"odd step: jitter scales the larger half", 1, 3, time.Second, 0.5, 2},
		{"one nanosecond base has no fixed half", 1, 1, time.Second, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Exponential(tt.attempt, tt.base, tt.max, tt.jitter)
			if got != tt.want {
				t.Errorf("Exponential(%d, %v, %v, %v) = %v (%d ns), want %v (%d ns)",
					tt.attempt, tt.base, tt.max, tt.jitter, got, int64(got), tt.want, int64(tt.want))
			}
		})
	}
}

// TestExponentialStaysInsideItsWindow checks the equal-jitter promise for
// every attempt of realistic schedules: a delay is at least half its step and
// below the step, the step never passes max, and the schedule never shrinks.
func TestExponentialStaysInsideItsWindow(t *testing.T) {
	schedules := []struct{ base, max time.Duration }{
		{100 * time.Millisecond, time.Second},
		{500 * time.Millisecond, 30 * time.Second},
		{time.Nanosecond, time.Hour},
		{7 * time.Millisecond, 7 * time.Millisecond},
	}
	for _, s := range schedules {
		var prev time.Duration
		for attempt := 1; attempt <= 80; attempt++ {
			step := s.base
			for i := 1; i < attempt && step < s.max; i++ {
				step = min(2*step, s.max)
			}
			low := Exponential(attempt, s.base, s.max, 0)
			high := Exponential(attempt, s.base, s.max, nearOne)
			if low != step/2 {
				t.Errorf("base %v max %v attempt %d: jitter 0 gives %v, want %v", s.base, s.max, attempt, low, step/2)
			}
			if high < low || (step > 1 && high >= step) || high > s.max {
				t.Errorf("base %v max %v attempt %d: jitter near 1 gives %v, want in [%v, %v)", s.base, s.max, attempt, high, low, step)
			}
			if low < prev {
				t.Errorf("base %v max %v attempt %d: %v is shorter than the previous %v", s.base, s.max, attempt, low, prev)
			}
			prev = low
		}
	}
}

// A max near the largest Duration means "no cap" to a caller; doubling the
// step past it must not wrap around to a negative delay.
func TestExponentialDoesNotOverflowWithHugeMax(t *testing.T) {
	const huge = time.Duration(math.MaxInt64)
	for _, base := range []time.Duration{time.Second, 1 << 62} {
		for attempt := 1; attempt <= 100; attempt++ {
			got := Exponential(attempt, base, huge, 0)
			if got < base/2 {
				t.Fatalf("Exponential(%d, %v, MaxInt64, 0) = %v, want at least %v", attempt, base, got, base/2)
			}
		}
	}
}

func TestBetween(t *testing.T) {
	tests := []struct {
		name     string
		min, max time.Duration
		jitter   float64
		want     time.Duration
	}{
		{"jitter zero gives min", time.Second, 3 * time.Second, 0, time.Second},
		{"jitter one half gives the middle", time.Second, 3 * time.Second, 0.5, 2 * time.Second},
		{"jitter near one stays below max", time.Second, 3 * time.Second, nearOne, 2_999_999_999},
		{"jitter of exactly one is clamped below max", time.Second, 3 * time.Second, 1, 2_999_999_999},
		{"jitter above one is clamped", time.Second, 3 * time.Second, 42, 2_999_999_999},
		{"negative jitter counts as zero", time.Second, 3 * time.Second, -1, time.Second},
		{"NaN jitter counts as zero", time.Second, 3 * time.Second, math.NaN(), time.Second},
		{"max equal to min gives min", 2 * time.Second, 2 * time.Second, 0.5, 2 * time.Second},
		{"max below min gives min", 2 * time.Second, time.Second, 0.5, 2 * time.Second},
		{"zero range gives zero", 0, 0, 0.5, 0},
		{"negative min is not raised", -time.Second, time.Second, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Between(tt.min, tt.max, tt.jitter); got != tt.want {
				t.Errorf("Between(%v, %v, %v) = %v (%d ns), want %v (%d ns)",
					tt.min, tt.max, tt.jitter, got, int64(got), tt.want, int64(tt.want))
			}
		})
	}
}
