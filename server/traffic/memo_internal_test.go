package traffic

import (
	"fmt"
	"strings"
	"testing"
)

// A flood of made-up user agents, long ones among them, leaves the Memo
// holding at most memoSlots of them, none longer than MaxUserAgentScan:
// its memory is bounded whatever it is sent.
func TestMemoStaysBoundedUnderAFlood(t *testing.T) {
	m := NewMemo(Default())
	long := strings.Repeat("x", MaxUserAgentScan)
	for i := range 4 * memoSlots {
		m.Classify(fmt.Sprintf("flood/%d", i), "/", "")
		m.Classify(long+fmt.Sprint(i), "/", "")
	}
	kept, bytes := 0, 0
	for i := range m.slots {
		if s := m.slots[i].Load(); s != nil {
			kept++
			bytes += len(s.ua)
			if len(s.ua) > MaxUserAgentScan {
				t.Fatalf("a user agent of %d bytes was kept", len(s.ua))
			}
		}
	}
	if kept > memoSlots || bytes > memoSlots*MaxUserAgentScan {
		t.Errorf("%d user agents, %d bytes kept", kept, bytes)
	}
	if kept < memoSlots/2 {
		t.Errorf("only %d of %d slots hold a user agent after the flood: the memo keeps too little to help", kept, memoSlots)
	}
}
