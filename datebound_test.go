package docsapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/docsapi/docsapi-go/internal/isodate/isodatetest"
)

// dateBoundEqual compares DateBounds exactly, including the kind and the UTC
// location, which cmp cannot see through the unexported fields.
var dateBoundEqual = cmp.Comparer(func(a, b DateBound) bool { return a == b })

func TestDay(t *testing.T) {
	tests := []struct {
		name     string
		bound    DateBound
		wantText string
		wantTime time.Time
	}{
		{"plain date", Day(2026, time.January, 2), "2026-01-02", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"day past month end rolls over", Day(2026, time.February, 30), "2026-03-02", time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{"month 13 is next January", Day(2026, 13, 1), "2027-01-01", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"day zero is the previous month's last", Day(2026, time.January, 0), "2025-12-31", time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)},
		{"leap day", Day(2028, time.February, 29), "2028-02-29", time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.bound.String(); got != tt.wantText {
				t.Errorf("String() = %q, want %q", got, tt.wantText)
			}
			if !tt.bound.IsDate() {
				t.Error("IsDate() = false, want true")
			}
			if tt.bound.IsZero() {
				t.Error("IsZero() = true, want false")
			}
			if got := tt.bound.Time(); !got.Equal(tt.wantTime) || got.Location() != time.UTC {
				t.Errorf("Time() = %v, want %v in UTC", got, tt.wantTime)
			}
		})
	}
}

// Day(t.Date()) takes the calendar date in t's own zone. Late evening in
// New York is already the next day in UTC; the user meant their own date.
func TestDayOfTimeDateUsesTheTimesZone(t *testing.T) {
	evening := time.Date(2026, 1, 2, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*60*60))
	got := Day(evening.Date())
	if got.String() != "2026-01-02" {
		t.Errorf("Day(t.Date()) = %q, want 2026-01-02", got)
	}
}

func TestInstant(t *testing.T) {
	tests := []struct {
		name     string
		in       time.Time
		wantText string
	}{
		{"zone converted to UTC", time.Date(2026, 1, 2, 12, 0, 0, 0, plusTwo), "2026-01-02T10:00:00Z"},
		{"UTC kept", time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), "2026-01-02T10:00:00Z"},
		{"fraction kept without trailing zeros", time.Date(2026, 1, 2, 12, 0, 0, 500_000_000, plusTwo), "2026-01-02T10:00:00.5Z"},
		{"midnight stays an instant", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), "2026-01-02T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Instant(tt.in)
			if got := b.String(); got != tt.wantText {
				t.Errorf("String() = %q, want %q", got, tt.wantText)
			}
			if b.IsDate() {
				t.Error("IsDate() = true, want false")
			}
			if b.IsZero() {
				t.Error("IsZero() = true, want false")
			}
			if got := b.Time(); !got.Equal(tt.in) || got.Location() != time.UTC {
				t.Errorf("Time() = %v, want %v in UTC", got, tt.in)
			}
		})
	}
}

func TestInstantOfZeroTimeIsZeroBound(t *testing.T) {
	for _, in := range []time.Time{{}, time.Time{}.In(plusTwo)} {
		b := Instant(in)
		if diff := cmp.Diff(DateBound{}, b, dateBoundEqual); diff != "" {
			t.Errorf("Instant(%v) mismatch (-want +got):\n%s", in, diff)
		}
		if !b.IsZero() || b.String() != "" || !b.Time().IsZero() || b.IsDate() {
			t.Errorf("Instant(%v): IsZero=%v String=%q Time=%v IsDate=%v, want the unset bound",
				in, b.IsZero(), b.String(), b.Time(), b.IsDate())
		}
	}
}

func TestZeroDateBound(t *testing.T) {
	var b DateBound
	if !b.IsZero() {
		t.Error("IsZero() = false, want true")
	}
	if b.IsDate() {
		t.Error("IsDate() = true, want false")
	}
	if got := b.String(); got != "" {
		t.Errorf("String() = %q, want empty", got)
	}
	if !b.Time().IsZero() {
		t.Errorf("Time() = %v, want zero", b.Time())
	}
	text, err := b.MarshalText()
	if err != nil || string(text) != "" {
		t.Errorf("MarshalText() = %q, %v; want empty, nil", text, err)
	}
}

// The forms come from the list the server's tests read too, so the SDK
// accepts exactly what the server does.
func TestParseDateBound(t *testing.T) {
	for _, tt := range isodatetest.Accepted {
		t.Run(tt.Name, func(t *testing.T) {
			got, err := ParseDateBound(tt.In)
			if err != nil {
				t.Fatalf("ParseDateBound(%q): %v", tt.In, err)
			}
			want := Instant(tt.Want)
			if tt.Date {
				want = Day(tt.Want.Date())
			}
			if diff := cmp.Diff(want, got, dateBoundEqual); diff != "" {
				t.Errorf("ParseDateBound(%q) mismatch (-want +got):\n%s", tt.In, diff)
			}
		})
	}
}

func TestParseDateBoundOfEmptyIsZero(t *testing.T) {
	got, err := ParseDateBound("")
	if err != nil || !got.IsZero() {
		t.Errorf("ParseDateBound(\"\") = %v, %v; want the zero bound", got, err)
	}
}

func TestParseDateBoundRejectsOtherForms(t *testing.T) {
	for _, tt := range isodatetest.Refused {
		t.Run(tt.Name, func(t *testing.T) {
			got, err := ParseDateBound(tt.In)
			if err == nil {
				t.Fatalf("ParseDateBound(%q) = %v, want an error", tt.In, got)
			}
			if want := "docsapi: " + isodatetest.Refusal(tt.In); err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
			if !got.IsZero() {
				t.Errorf("bound = %v, want zero on error", got)
			}
		})
	}
}

// A DateBound is meant to sit in config structs and CLI flags, so its text
// form must survive a JSON round trip with its kind intact: a date stays a
// date (not midnight UTC as an instant), which changes what is sent.
func TestDateBoundTextRoundTripThroughJSON(t *testing.T) {
	type exportConfig struct {
		From  DateBound `json:"from"`
		To    DateBound `json:"to"`
		Unset DateBound `json:"unset"`
		Gone  DateBound `json:"gone,omitzero"`
	}
	in := exportConfig{
		From: Day(2026, time.January, 2),
		To:   Instant(time.Date(2026, 1, 2, 12, 0, 0, 500_000_000, plusTwo)),
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	const wantJSON = `{"from":"2026-01-02","to":"2026-01-02T10:00:00.5Z","unset":""}`
	if string(data) != wantJSON {
		t.Errorf("Marshal = %s, want %s", data, wantJSON)
	}

	var out exportConfig
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if diff := cmp.Diff(in, out, dateBoundEqual); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if !out.From.IsDate() || out.To.IsDate() {
		t.Errorf("kinds after round trip: From.IsDate=%v To.IsDate=%v, want true, false", out.From.IsDate(), out.To.IsDate())
	}
}

func TestDateBoundUnmarshalTextRejectsGarbage(t *testing.T) {
	var cfg struct {
		From DateBound `json:"from"`
	}
	err := json.Unmarshal([]byte(`{"from":"yesterday"}`), &cfg)
	if err == nil {
		t.Fatalf("Unmarshal succeeded with %v, want an error", cfg.From)
	}
	if want := "docsapi: " + isodatetest.Refusal("yesterday"); err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestDateBoundUnmarshalTextOverwritesPreviousValue(t *testing.T) {
	b := Day(2026, time.January, 2)
	if err := b.UnmarshalText([]byte("2026-01-02T10:00:00Z")); err != nil {
		t.Fatalf("UnmarshalText: %v", err)
	}
	if diff := cmp.Diff(Instant(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)), b, dateBoundEqual); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if err := b.UnmarshalText(nil); err != nil {
		t.Fatalf("UnmarshalText(empty): %v", err)
	}
	if !b.IsZero() {
		t.Errorf("after UnmarshalText(empty) bound = %v, want zero", b)
	}
}
