package traffic_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

// A Memo answers as its Classifier does, cold and warm, from many
// goroutines at once, for the user agents of the classifier's own tests,
// variations that collide in its slots, and user agents too long to keep.
func TestMemoMatchesItsClassifier(t *testing.T) {
	c := traffic.Default()
	m := traffic.NewMemo(c)
	var uas []string
	for _, u := range userAgents {
		uas = append(uas, u.ua)
	}
	for i := range 10_000 {
		uas = append(uas, fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) Firefox/%d.0", i), fmt.Sprintf("bot-%d/1.0", i))
	}
	uas = append(uas, strings.Repeat("a", traffic.MaxUserAgentScan)+" GPTBot/1.1", "", "  ")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 2 {
				for i, ua := range uas {
					if i%4 != g && round == 0 {
						continue // goroutines warm different slots first
					}
					for _, in := range benchInputs {
						if got, want := m.Classify(ua, in.path, in.accept), c.Classify(ua, in.path, in.accept); got != want {
							t.Errorf("%q %s: the memo says %v, the classifier %v", ua, in.name, got, want)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	if m.Classifier() != c {
		t.Error("Classifier() is not the classifier the memo was made over")
	}
}

// BenchmarkMemo times a warm Memo on each of benchInputs. Like Classify,
// it allocates nothing once warm: reported here, not asserted by a test.
func BenchmarkMemo(b *testing.B) {
	m := traffic.NewMemo(traffic.Default())
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			m.Classify(in.ua, in.path, in.accept) // warm
			b.ReportAllocs()
			for b.Loop() {
				sink = m.Classify(in.ua, in.path, in.accept)
			}
		})
	}
}
