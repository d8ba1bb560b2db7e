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

func TestCompact(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 9999: "9,999", 10_000: "10k", 250_000: "250k", 1_000_000: "1M", 2_500_000: "2.5M", 12_340_000: "12.3M"} {
		if got := Compact(n); got != want {
			t.Errorf("Compact(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestChange(t *testing.T) {
	const p = "previous 30 days"
	for _, tc := range []struct {
		cur, prev int64
		want      string
	}{
		{112, 100, "+12% vs previous 30 days"},
		{88, 100, "−12% vs previous 30 days"},
		{1035, 1000, "+3.5% vs previous 30 days"},
		{1000, 1001, "−0.1% vs previous 30 days"},
		{300, 100, "+200% vs previous 30 days"},
		{0, 100, "−100% vs previous 30 days"},
		{5, 5, "no change vs previous 30 days"},
		{0, 0, "no change vs previous 30 days"},
		{7, 0, "new (none in the previous 30 days)"},
	} {
		if got := Change(tc.cur, tc.prev, p); got != tc.want {
			t.Errorf("Change(%d, %d) = %q, want %q", tc.cur, tc.prev, got, tc.want)
		}
	}
}

func TestDifference(t *testing.T) {
	for cur, want := range map[int]string{
		4: "+2 vs previous day", 1: "−1 vs previous day", 2: "no change vs previous day", 12: "+10 vs previous day",
	} {
		if got := Difference(cur, 2, "previous day"); got != want {
			t.Errorf("Difference(%d, 2) = %q, want %q", cur, got, want)
		}
	}
}

func TestShareChange(t *testing.T) {
	const p = "previous day"
	for _, tc := range []struct {
		part, whole, prevPart, prevWhole int64
		want                             string
	}{
		{30, 100, 25, 100, "+5.0 pts vs previous day"},
		{1, 3, 1, 4, "+8.3 pts vs previous day"}, // 33.3 % − 25.0 %
		{20, 100, 50, 100, "−30.0 pts vs previous day"},
		{2, 8, 1, 4, "no change vs previous day"},
		{0, 0, 0, 0, "no change vs previous day"},
		{3, 10, 0, 0, "new (none in the previous day)"},
		{0, 0, 1, 8, "was 12.5 % in the previous day"},
	} {
		if got := ShareChange(tc.part, tc.whole, tc.prevPart, tc.prevWhole, p); got != tc.want {
			t.Errorf("ShareChange(%d/%d, %d/%d) = %q, want %q", tc.part, tc.whole, tc.prevPart, tc.prevWhole, got, tc.want)
		}
	}
}
