package isodate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/internal/isodate"
	"github.com/docsapi/docsapi-go/internal/isodate/isodatetest"
)

func TestParseAccepts(t *testing.T) {
	for _, tt := range isodatetest.Accepted {
		t.Run(tt.Name, func(t *testing.T) {
			got, date, err := isodate.Parse(tt.In)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.In, err)
			}
			if !got.Equal(tt.Want) || got.Location() != time.UTC || date != tt.Date {
				t.Errorf("Parse(%q) = %v, date %v; want %v in UTC, date %v", tt.In, got, date, tt.Want, tt.Date)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range isodatetest.Refused {
		t.Run(tt.Name, func(t *testing.T) {
			got, date, err := isodate.Parse(tt.In)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, date %v; want an error", tt.In, got, date)
			}
			if want := isodatetest.Refusal(tt.In); err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
			if !got.IsZero() || date {
				t.Errorf("Parse(%q) = %v, date %v alongside the error; want the zero time", tt.In, got, date)
			}
		})
	}
}

// Every example the error shows must itself be accepted, or the message
// would send clients from one refusal to another.
func TestParseErrorExamplesAreAccepted(t *testing.T) {
	_, _, err := isodate.Parse("x")
	_, list, _ := strings.Cut(err.Error(), "for example, ")
	list, _, _ = strings.Cut(list, " (")
	var examples []string
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		if f != "or" {
			examples = append(examples, f)
		}
	}
	if len(examples) != 4 {
		t.Fatalf("found the examples %q in %q, want 4", examples, err)
	}
	for _, ex := range examples {
		if _, _, err := isodate.Parse(ex); err != nil {
			t.Errorf("the example %q is refused: %v", ex, err)
		}
	}
}

// FuzzParse checks that Parse never panics, and that what it accepts means
// the same instant once written as RFC 3339, the form the SDK sends.
func FuzzParse(f *testing.F) {
	for _, c := range isodatetest.Accepted {
		f.Add(c.In)
	}
	for _, c := range isodatetest.Refused {
		f.Add(c.In)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, date, err := isodate.Parse(s)
		if err != nil {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("Parse(%q) = %v, not in UTC", s, got)
		}
		again, againDate, err := isodate.Parse(got.Format(time.RFC3339Nano))
		if err != nil || !again.Equal(got) || againDate {
			t.Fatalf("Parse(%q) = %v, but its RFC 3339 form reads as %v, %v, %v", s, got, again, againDate, err)
		}
		if date && (got.Format(time.DateOnly) != s) {
			t.Fatalf("Parse(%q) = the date %v, which prints otherwise", s, got)
		}
	})
}
