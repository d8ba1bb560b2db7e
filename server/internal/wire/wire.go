// Package wire holds the JSON bodies the server answers with, as the API's
// OpenAPI document (package api) describes them: one Go type per schema, its
// fields in the order the server writes them, a pointer where the schema
// allows null, and an embedded pointer for a group of properties that is
// present or absent as a whole. They are the server's own, not the SDK's,
// so that the server's answers change only when the server does; the SDK
// reads them in the server's end-to-end tests, and every response in the
// server's tests is checked against the document.
//
// The types hold plain values and encode with encoding/json as they are:
// the handlers turn the store's records into them, with Time, NullTime and
// NullString for the fields whose wire form is not the Go value's own.
package wire

import "time"

// Time is an instant as the API writes it: RFC 3339 in UTC, with as many
// fractional digits as it has.
func Time(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// NullTime is Time(t) for a nullable timestamp, nil (null) for the zero
// time.
func NullTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := Time(t)
	return &s
}

// NullString is s for a nullable string, nil (null) for "".
func NullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ErrorDetail is one entry of an analytics error's details (the
// ErrorDetail schema): one problem of the request.
type ErrorDetail struct {
	Message string `json:"message"`
}
