package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/internal/isodate"
)

// parseDate reads the value of a date parameter (dateFrom, dateTo) by the
// rule the SDK's ParseDateBound follows too (package isodate): a date means
// midnight UTC, a date-time without a zone means UTC. It returns UTC.
func parseDate(v string) (time.Time, error) {
	t, _, err := isodate.Parse(v)
	if err == nil {
		return t, nil
	}
	// A client that put an offset such as +02:00 into a query string
	// without escaping it sent a space, which is what "+" means there.
	if i := strings.LastIndexByte(v, ' '); i >= 0 {
		if _, _, plusErr := isodate.Parse(v[:i] + "+" + v[i+1:]); plusErr == nil {
			return time.Time{}, fmt.Errorf(`%w; a "+" in a query string means a space: send it as %%2B`, err)
		}
	}
	return time.Time{}, err
}
