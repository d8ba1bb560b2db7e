package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

type view struct {
	Path    *string `json:"path"`
	Count   *int64  `json:"count"`
	Visitor *string `json:"visitor"`
}

type body struct {
	Views *[]view           `json:"views"`
	Tags  map[string]string `json:"tags"`
	Flag  bool              `json:"flag"`
	Ratio float32           `json:"ratio"`
	Small int8              `json:"small"`
	Any   any               `json:"any"`
	Raw   json.RawMessage   `json:"raw"`
	Blob  []byte            `json:"blob"`
	Inner *struct {
		Name string `json:"name"`
	} `json:"inner"`
}

func decodeErr(t *testing.T, text string, v any, o Options) *Error {
	t.Helper()
	err := Decode([]byte(text), v, o)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Decode(%s) = %v, want an *Error", text, err)
	}
	return e
}

func TestDecodeTellsWhere(t *testing.T) {
	viewFields := []string{"path", "count", "visitor"}
	bodyFields := []string{"views", "tags", "flag", "ratio", "small", "any", "raw", "blob", "inner"}
	for _, tc := range []struct {
		text string
		want Error
	}{
		{`{"views": [{"path": "/a"}, {"path": "/b", "referrer": "x"}]}`, Error{Kind: UnknownField, Path: "views[1]", Field: "referrer", Known: viewFields}},
		{`{"extra": 1, "views": [{"referrer": "x"}]}`, Error{Kind: UnknownField, Field: "extra", Known: bodyFields}},
		// The first problem in the text is the one told.
		{`{"views": [{"path": "/a", "referrer": "x", "count": "2"}]}`, Error{Kind: UnknownField, Path: "views[0]", Field: "referrer", Known: viewFields}},
		{`{"views": [{"count": "2", "referrer": "x"}]}`, Error{Kind: WrongType, Path: "views[0].count", Field: "views.count", Value: "string"}},
		// A later key of the same name does not hide an earlier one's problem.
		{`{"views": [{"x": 1}], "views": []}`, Error{Kind: UnknownField, Path: "views[0]", Field: "x", Known: viewFields}},
		{`{"views": [{"count": 1.5}]}`, Error{Kind: WrongType, Path: "views[0].count", Field: "views.count", Value: "number 1.5"}},
		{`{"small": 300}`, Error{Kind: WrongType, Path: "small", Field: "small", Value: "number 300"}},
		{`{"views": {}}`, Error{Kind: WrongType, Path: "views", Field: "views", Value: "object"}},
		{`{"views": [1]}`, Error{Kind: WrongType, Path: "views[0]", Field: "views", Value: "number"}},
		{`{"tags": {"a": "b", "c": true}}`, Error{Kind: WrongType, Path: `tags["c"]`, Field: "tags", Value: "bool"}},
		{`{"inner": {"name": "n", "nom": 1}}`, Error{Kind: UnknownField, Path: "inner", Field: "nom", Known: []string{"name"}}},
		{`{"blob": [1, true]}`, Error{Kind: WrongType, Path: "blob[1]", Field: "blob", Value: "bool"}},
		{`[]`, Error{Kind: WrongType, Value: "array"}},
		{`"x"`, Error{Kind: WrongType, Value: "string"}},
		{`{} {}`, Error{Kind: Trailing}},
		// A stray closing bracket, which json.Decoder.More does not see.
		{`{"flag": true}]`, Error{Kind: Trailing}},
		{`{}}`, Error{Kind: Trailing}},
		{`{"flag": "yes"} trailing`, Error{Kind: WrongType, Path: "flag", Field: "flag", Value: "string"}},
		{" \n\t", Error{Kind: Empty}},
		{`{"views": [`, Error{Kind: Truncated}},
		{"{\n  \"flag\": true,\n  \"small\" 1\n}", Error{Kind: Syntax, Offset: 29, Line: 3, Column: 11}},
	} {
		var b body
		got := decodeErr(t, tc.text, &b, Options{})
		got.Err = nil
		if got.Want != nil {
			got.Want = nil
		}
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("Decode(%s) = %+v, want %+v", tc.text, *got, tc.want)
		}
	}
}

func TestDecodeAcceptsWhatEncodingJSONAccepts(t *testing.T) {
	text := `{"VIEWS": [{"path": "/a", "count": 2, "visitor": null}], "tags": {"x": "y"}, "flag": true, "ratio": 1e3,
		"small": -128, "any": [1, {"a": null}], "raw": {"b": [2]}, "blob": "aGk=", "inner": {"Name": "n"}}`
	var got, want body
	if err := Decode([]byte(text), &got, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(text), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode gave %+v, encoding/json %+v", got, want)
	}
}

func TestDecodeOptions(t *testing.T) {
	var b body
	if err := Decode([]byte(`{"flag": true, "other": {"deep": [1]}}`), &b, Options{IgnoreUnknown: true}); err != nil || !b.Flag {
		t.Errorf("IgnoreUnknown: %v, %+v", err, b)
	}
	e := decodeErr(t, `{"Flag": true}`, &body{}, Options{MatchCase: true})
	if e.Kind != UnknownField || e.Field != "Flag" {
		t.Errorf("MatchCase: %+v, want Flag unknown", e)
	}
	// Check takes a value before its type is walked.
	check := func(t reflect.Type, raw []byte) (bool, error) {
		if t.Kind() == reflect.Bool && bytes.HasPrefix(raw, []byte(`"`)) {
			if string(raw) != `"on"` {
				return true, fmt.Errorf("%s is not on", raw)
			}
			return true, nil
		}
		return false, nil
	}
	e = decodeErr(t, `{"views": [], "flag": "off"}`, &body{}, Options{Check: check})
	if e.Kind != BadValue || e.Path != "flag" || e.Err == nil || e.Err.Error() != `"off" is not on` {
		t.Errorf("Check: %+v", e)
	}
	// What Check let through is decoded by encoding/json, whose error
	// stands.
	e = decodeErr(t, `{"flag": "on"}`, &body{}, Options{Check: check})
	if e.Kind != WrongType || e.Field != "flag" {
		t.Errorf("Check let through: %+v", e)
	}
}

func TestFieldsFollowTheType(t *testing.T) {
	type embedded struct {
		Deep string `json:"deep"`
	}
	type sample struct {
		Tagged    string `json:"tagged,omitempty"`
		Untagged  int
		Skipped   bool `json:"-"`
		unwritten string
		Last      *int64 `json:"last"`
		embedded
	}
	_ = sample{}.unwritten
	if got, want := Fields(reflect.TypeFor[*sample]()), []string{"tagged", "Untagged", "last", "deep"}; !slices.Equal(got, want) {
		t.Errorf("Fields = %q, want %q", got, want)
	}
}

// FuzzWalkAgreesWithEncodingJSON holds the walk to encoding/json: it
// refuses what encoding/json refuses, with the same first problem, and
// accepts what it accepts, so that a path told is the problem's.
func FuzzWalkAgreesWithEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"views": [{"path": "/a", "count": 1}]}`, `{"views": [{"path": 1}]}`, `{"views": [{"x": 1}], "views": []}`,
		`{"VIEWS": null, "Flag": true}`, `{"tags": {"a": 1}}`, `{"small": 1e2}`, `{"small": -129}`, `{"ratio": 1e40}`,
		`{"any": {"x": [1, "y"]}, "raw": 3}`, `{"blob": "!!"}`, `{"inner": {"name": 1}}`, `{"views": "x"}`, `[1]`, `3`, `null`,
		`{"views": [{"count": 9223372036854775808}]}`, `{"views": [null, {"visitor": false}]}`, `{"ſmall": 1}`, `{"flag": 0}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw json.RawMessage
		if json.Unmarshal(data, &raw) != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var b body
		jerr := dec.Decode(&b)
		werr := walk(raw, reflect.TypeFor[body](), Options{})
		switch {
		case jerr == nil && werr != nil:
			// encoding/json checks a []byte's base64 and nothing else the walk does not.
			if werr.Kind == WrongType && strings.HasPrefix(werr.Path, "blob") {
				return
			}
			t.Fatalf("%s: encoding/json accepts it, the walk says %v", raw, werr)
		case jerr != nil && werr == nil:
			var se *json.SyntaxError
			if errors.As(jerr, &se) || strings.Contains(jerr.Error(), "base64") {
				return
			}
			t.Fatalf("%s: encoding/json says %v, the walk accepts it", raw, jerr)
		case jerr != nil && !agrees(werr, jerr):
			t.Fatalf("%s: encoding/json says %v, the walk %+v", raw, jerr, werr)
		}
	})
}
