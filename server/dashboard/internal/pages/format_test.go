package pages

import (
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234", 100000: "100,000"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		part, whole int64
		want        string
	}{{0, 0, "–"}, {1, 4, "25.0 %"}, {1, 3, "33.3 %"}, {5, 5, "100.0 %"}} {
		if got := Share(tc.part, tc.whole); got != tc.want {
			t.Errorf("Share(%d, %d) = %q, want %q", tc.part, tc.whole, got, tc.want)
		}
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Hour: "just now", 59 * time.Second: "just now", 5 * time.Minute: "5 min",
		3 * time.Hour: "3 h", 47 * time.Hour: "47 h", 72 * time.Hour: "3 d",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestSince(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Hour: "just now", 59 * time.Second: "just now", 5 * time.Minute: "5 min ago", 72 * time.Hour: "3 d ago",
	} {
		if got := Since(d); got != want {
			t.Errorf("Since(%s) = %q, want %q", d, got, want)
		}
	}
}
