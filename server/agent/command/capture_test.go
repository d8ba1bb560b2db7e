package command

import (
	"strings"
	"testing"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		writes  []string
		want    string
		dropped int64
	}{
		{"all fits", 10, []string{"abc", "de"}, "abcde", 0},
		{"exactly full", 6, []string{"abcdef"}, "abcdef", 0},
		{"the middle is dropped", 6, []string{"abcdefghij"}, "abc\n[… 4 bytes of output dropped …]\nhij", 4},
		{"the ring wraps over small writes", 6, []string{"ab", "cd", "ef", "gh", "ij", "k"}, "abc\n[… 5 bytes of output dropped …]\nijk", 5},
		{"a large write replaces the ring", 6, []string{"abcd", "0123456789"}, "abc\n[… 8 bytes of output dropped …]\n789", 8},
		{"an odd bound", 5, []string{"abcdefg"}, "ab\n[… 2 bytes of output dropped …]\nefg", 2},
		{"a bound of one keeps the last byte", 1, []string{"abc", "d"}, "\n[… 3 bytes of output dropped …]\nd", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.max)
			var total int
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
				total += n
			}
			if got := c.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := c.dropped(); got != tt.dropped {
				t.Errorf("dropped() = %d, want %d", got, tt.dropped)
			}
			if c.total != int64(total) {
				t.Errorf("total = %d, want %d", c.total, total)
			}
			if kept := len(strings.Join([]string{string(c.head), string(c.tail)}, "")); kept > tt.max {
				t.Errorf("kept %d bytes, bound %d", kept, tt.max)
			}
		})
	}
}
