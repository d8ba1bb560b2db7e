package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteSize is a size in bytes, written in the file as a whole number of
// bytes or as a string with a binary unit: "512MiB", "2 GiB", "64KiB".
type byteSize int64

// byteUnits are the units a byteSize may be written in.
var byteUnits = []struct {
	name string
	size int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

func (b byteSize) MarshalJSON() ([]byte, error) {
	for _, u := range byteUnits[:3] {
		if b != 0 && int64(b)%u.size == 0 {
			return json.Marshal(strconv.FormatInt(int64(b)/u.size, 10) + u.name)
		}
	}
	return json.Marshal(int64(b))
}

func (b *byteSize) UnmarshalJSON(data []byte) error {
	var n json.Number
	if err := json.Unmarshal(data, &n); err == nil {
		v, err := n.Int64()
		if err != nil || v < 0 {
			return fmt.Errorf("%s is not a size: want a whole number of bytes, or a string such as \"512MiB\"", n)
		}
		*b = byteSize(v)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.New(`want a size: a whole number of bytes, or a string such as "512MiB" or "2GiB"`)
	}
	v, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

// parseByteSize reads "512MiB", "2 GiB" or "1024".
func parseByteSize(s string) (int64, error) {
	text := strings.TrimSpace(s)
	unit := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(text, u.name) {
			text, unit = strings.TrimSpace(strings.TrimSuffix(text, u.name)), u.size
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q is not a size such as \"512MiB\" or \"2GiB\" (the units are B, KiB, MiB and GiB)", s)
	}
	return n * unit, nil
}
