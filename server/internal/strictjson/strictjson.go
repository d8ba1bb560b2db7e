// Package strictjson decodes JSON strictly, for every decoder of the server
// and its command (request bodies, the configuration file): one value and
// nothing after it, no field the type lacks, no value of the wrong type.
// Where encoding/json says only that something is wrong, an *Error says
// where: the path of the value from the top (views[3], projects[0].agent),
// and for an unknown field the fields its object has, so that a message
// can list them. The wording of a message is the caller's: the API and the
// configuration file each have their own.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Options are what a decoder allows beyond plain strictness.
type Options struct {
	// IgnoreUnknown lets an object hold fields its type does not have;
	// their values are skipped unchecked.
	IgnoreUnknown bool
	// MatchCase makes a name match a field only as the type writes it.
	// Otherwise a name matches in any case, as encoding/json matches it.
	MatchCase bool
	// Check, if set, is asked about every value before its type is
	// walked (pointers taken away). It reports whether it checked the
	// value itself, and what is wrong with it: a value of a type with its
	// own UnmarshalJSON, which is otherwise walked by its kind like any
	// other. Its error is the Err of a BadValue.
	Check func(t reflect.Type, raw []byte) (checked bool, err error)
}

// Kind says what is wrong with a JSON text.
type Kind int

// The kinds of Error.
const (
	// Empty: nothing but white space.
	Empty Kind = iota + 1
	// Syntax: not JSON, at Offset (Line, Column); Err is encoding/json's.
	Syntax
	// Truncated: the text ends inside the value.
	Truncated
	// Trailing: something follows the value.
	Trailing
	// UnknownField: the object at Path has a field named Field that its
	// type does not, whose fields are Known.
	UnknownField
	// WrongType: the value at Path (Field, as encoding/json names it) is
	// a Value where its type, Want, takes another kind.
	WrongType
	// BadValue: the value at Path is refused by Check, or by its own
	// UnmarshalJSON: Err says why.
	BadValue
)

// Error is what Decode finds wrong: the first problem, in the order of the
// text.
type Error struct {
	Kind Kind
	// Path is where: the object that holds an unknown field, or the value
	// of the wrong type, from the top: names, [index] and ["map key"]
	// (projects[0].agent.env["A"]); "" for the top level.
	Path string
	// Field is the unknown field's name as sent; for a WrongType, the
	// names of the fields that lead to the value joined by dots, without
	// indexes or map keys (views.count), as encoding/json names it.
	Field string
	// Known are the fields of the object holding an unknown field, in the
	// order of its type.
	Known []string
	// Want is the type of a value of the wrong type.
	Want reflect.Type
	// Value is what was sent instead, as encoding/json says it: "object",
	// "array", "string", "number" or "bool", or "number" and the number
	// when it does not fit Want ("number 1.5").
	Value string
	// Offset is where a Syntax error is, in bytes from the start; Line and
	// Column (from 1) say the same for people.
	Offset       int64
	Line, Column int
	// Err is the cause of a Syntax error or a BadValue.
	Err error
}

func (e *Error) Error() string {
	at := ""
	if e.Path != "" {
		at = e.Path + ": "
	}
	switch e.Kind {
	case Empty:
		return "no JSON value"
	case Syntax:
		return fmt.Sprintf("not valid JSON (line %d, column %d): %v", e.Line, e.Column, e.Err)
	case Truncated:
		return "not valid JSON: it ends too early"
	case Trailing:
		return "data after the JSON value"
	case UnknownField:
		return fmt.Sprintf("%sunknown field %q; the fields are %s", at, e.Field, strings.Join(e.Known, ", "))
	case WrongType:
		return fmt.Sprintf("%swant %s, got a JSON %s", at, KindOf(e.Want), e.Value)
	}
	return at + fmt.Sprint(e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Decode decodes data, which must hold one JSON value and nothing after it
// but white space, into v, a non-nil pointer. Its error is an *Error.
//
// Decode walks the value alongside v's type, first, when MatchCase or
// Check asks for what encoding/json does not check; otherwise only once
// encoding/json refused it, to tell where, so that a text that decodes
// costs no more than encoding/json.
func Decode(data []byte, v any, o Options) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Kind: Empty}
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || reflect.ValueOf(v).IsNil() {
		return &Error{Kind: BadValue, Err: fmt.Errorf("strictjson: Decode needs a non-nil pointer, not %T", v)}
	}
	t = t.Elem()
	dec := json.NewDecoder(bytes.NewReader(data))
	if !o.IgnoreUnknown {
		dec.DisallowUnknownFields()
	}
	if o.MatchCase || o.Check != nil {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return textError(data, err)
		}
		if e := walk(raw, t, o); e != nil {
			return e
		}
		inner := json.NewDecoder(bytes.NewReader(raw))
		if !o.IgnoreUnknown {
			inner.DisallowUnknownFields()
		}
		if err := inner.Decode(v); err != nil {
			return decodeError(err)
		}
	} else if err := dec.Decode(v); err != nil {
		return describe(data, err, t, o)
	}
	// Anything but white space after the value is refused: Decoder.More
	// alone lets a stray ']' or '}' through.
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return &Error{Kind: Trailing}
	}
	return nil
}

// textError is the error of reading data's first value, which is not
// JSON.
func textError(data []byte, err error) *Error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		e := &Error{Kind: Syntax, Offset: se.Offset, Err: err}
		e.Line, e.Column = lineColumn(data, se.Offset)
		return e
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: Truncated, Err: err}
	case errors.Is(err, io.EOF):
		return &Error{Kind: Empty}
	}
	return &Error{Kind: BadValue, Err: err}
}

// lineColumn is where offset (the count of bytes read, the offending one
// included) falls in data.
func lineColumn(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for _, c := range data[:min(max(int(offset)-1, 0), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// describe turns err, encoding/json's refusal of data's first value into
// t, into an *Error that says where.
func describe(data []byte, err error, t reflect.Type, o Options) *Error {
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return textError(data, err)
	}
	// The value is JSON (its syntax is checked before it is decoded), so
	// it reads again; walked, its first problem is the one encoding/json
	// met first. If the walk disagrees, encoding/json's word stands.
	var raw json.RawMessage
	if json.NewDecoder(bytes.NewReader(data)).Decode(&raw) == nil {
		if e := walk(raw, t, o); e != nil && agrees(e, err) {
			return e
		}
	}
	return decodeError(err)
}

// agrees reports whether e is the problem err is about.
func agrees(e *Error, err error) bool {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return e.Kind == WrongType && e.Field == te.Field && e.Value == te.Value
	case e.Kind == UnknownField:
		f, ok := unknownField(err)
		return ok && f == e.Field
	}
	return false
}

// decodeError is err, an error of encoding/json's decoding, as an *Error
// without a path.
func decodeError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &Error{Kind: WrongType, Field: te.Field, Want: te.Type, Value: te.Value, Err: err}
	}
	if f, ok := unknownField(err); ok {
		return &Error{Kind: UnknownField, Field: f, Err: err}
	}
	return &Error{Kind: BadValue, Err: err}
}

// unknownField returns the name of the field that err, an error of a
// json.Decoder that disallows unknown fields, refuses. The error has no
// type of its own (encoding/json makes it with fmt.Errorf), so its wording
// is all there is to tell it by.
func unknownField(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	name, uerr := strconv.Unquote(rest)
	return name, uerr == nil
}

// KindOf names the JSON value a Go type is decoded from: "a string", "a
// number", "a boolean", "an array", "an object", or "another type".
func KindOf(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another type"
}
