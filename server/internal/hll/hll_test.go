package hll

import (
	"testing"

	"github.com/axiomhq/hyperloglog"
)

func TestSketchRoundTripsAndMerges(t *testing.T) {
	var a, b Sketch
	if a.Estimate() != 0 {
		t.Fatal("the zero sketch is not empty")
	}
	for i := range uint64(100) {
		a.Insert(Mix64(i))
		b.Insert(Mix64(i + 50))
	}
	var c Sketch
	if err := c.UnmarshalBinary(a.AppendBinary(nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.MergeBinary(b.AppendBinary(nil)); err != nil {
		t.Fatal(err)
	}
	if got := c.Estimate(); got != 150 {
		t.Errorf("a union of 150 items estimates %d", got)
	}
	var empty Sketch
	if err := empty.UnmarshalBinary(new(Sketch).AppendBinary(nil)); err != nil || empty.Estimate() != 0 {
		t.Errorf("the empty sketch's encoding: %v, %d", err, empty.Estimate())
	}
}

// A sketch of another precision would fail every merge with ours, and a
// damaged one would count wrong: both are refused when decoded.
func TestSketchRefusesOtherPrecisionsAndDamage(t *testing.T) {
	other := hyperloglog.New14()
	other.InsertHash(Mix64(1))
	enc, err := other.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var s Sketch
	if err := s.UnmarshalBinary(enc); err == nil {
		t.Error("a sketch of precision 14 was taken")
	}
	var a Sketch
	a.Insert(Mix64(1))
	good := a.AppendBinary(nil)
	for name, bad := range map[string][]byte{"truncated": good[:len(good)-1], "empty": nil, "text": []byte("visitor")} {
		if err := s.MergeBinary(bad); err == nil {
			t.Errorf("%s: merged", name)
		}
	}
}
