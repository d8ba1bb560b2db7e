package hll_test

import (
	"fmt"

	"github.com/docsapi/docsapi-go/server/internal/hll"
)

// Count visitors per hour, store the hours' sketches, and answer a range
// by merging what was stored.
func Example() {
	hours := [][]uint64{
		{101, 102, 103, 101}, // visitor IDs seen in the first hour
		{103, 104},
	}
	var stored [][]byte
	for _, visitors := range hours {
		var s hll.Sketch
		for _, id := range visitors {
			// IDs are not well mixed: Mix64 makes them hashes.
			s.Insert(hll.Mix64(id))
		}
		stored = append(stored, s.AppendBinary(nil))
	}

	var total hll.Sketch
	for _, b := range stored {
		if err := total.MergeBinary(b); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(total.Estimate(), "unique visitors in", total.EncodedLen(), "bytes")
	// Output: 4 unique visitors in 22 bytes
}
