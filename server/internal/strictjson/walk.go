package strictjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// The walk reads a JSON value alongside the Go type it is decoded into and
// stops at the first problem, in the order of the text, as encoding/json
// would meet it: an unknown field, or a value its type does not take.
// Names match as encoding/json matches them (exactly, else in any case)
// unless Options.MatchCase. A value whose type implements UnmarshalJSON is
// walked by its kind like any other unless Options.Check takes it; an
// interface or a json.RawMessage takes any value.

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// step is one step of a path: a field's name, an index or a map key.
type step struct {
	name  string // a field's name, or a map key when key is set
	index int    // an array's index, when name is "" and !key
	key   bool
}

type walker struct {
	o    Options
	path []step
}

func walk(raw []byte, t reflect.Type, o Options) *Error {
	w := &walker{o: o}
	return w.value(raw, t)
}

// where writes the path: names, [index], ["map key"].
func (w *walker) where() string {
	var b strings.Builder
	for _, s := range w.path {
		switch {
		case s.key:
			b.WriteString("[" + strconv.Quote(s.name) + "]")
		case s.name != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		default:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		}
	}
	return b.String()
}

// field writes the path as encoding/json names a field: the names of the
// fields alone, joined by dots.
func (w *walker) field() string {
	var names []string
	for _, s := range w.path {
		if s.name != "" && !s.key {
			names = append(names, s.name)
		}
	}
	return strings.Join(names, ".")
}

func (w *walker) wrongType(t reflect.Type, value string) *Error {
	return &Error{Kind: WrongType, Path: w.where(), Field: w.field(), Want: t, Value: value}
}

// value walks raw, one JSON value, as a t.
func (w *walker) value(raw []byte, t reflect.Type) *Error {
	raw = bytes.TrimSpace(raw)
	sent := valueKind(raw)
	if sent == "null" {
		return nil // null leaves any value as it is
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if w.o.Check != nil {
		if checked, err := w.o.Check(t, raw); checked {
			if err != nil {
				return &Error{Kind: BadValue, Path: w.where(), Field: w.field(), Err: err}
			}
			return nil
		}
	}
	if t == rawMessageType {
		return nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Struct:
		if sent != "object" {
			return w.wrongType(t, sent)
		}
		return w.object(raw, t)
	case reflect.Map:
		if sent != "object" {
			return w.wrongType(t, sent)
		}
		return w.object(raw, t)
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && sent == "string" {
			return nil // []byte, in base64
		}
		if sent != "array" {
			return w.wrongType(t, sent)
		}
		return w.array(raw, t.Elem())
	case reflect.String:
		if sent != "string" {
			return w.wrongType(t, sent)
		}
	case reflect.Bool:
		if sent != "bool" {
			return w.wrongType(t, sent)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if sent != "number" {
			return w.wrongType(t, sent)
		}
		if n, err := strconv.ParseInt(string(raw), 10, 64); err != nil || reflect.Zero(t).OverflowInt(n) {
			return w.wrongType(t, "number "+string(raw))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if sent != "number" {
			return w.wrongType(t, sent)
		}
		if n, err := strconv.ParseUint(string(raw), 10, 64); err != nil || reflect.Zero(t).OverflowUint(n) {
			return w.wrongType(t, "number "+string(raw))
		}
	case reflect.Float32, reflect.Float64:
		if sent != "number" {
			return w.wrongType(t, sent)
		}
		if n, err := strconv.ParseFloat(string(raw), t.Bits()); err != nil || reflect.Zero(t).OverflowFloat(n) {
			return w.wrongType(t, "number "+string(raw))
		}
	default:
		return w.wrongType(t, sent)
	}
	return nil
}

// object walks raw, a JSON object, as t, a struct or a map, its fields in
// the order of the text.
func (w *walker) object(raw []byte, t reflect.Type) *Error {
	var fields []field
	if t.Kind() == reflect.Struct {
		fields = fieldsOf(t)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil // not reached: raw is valid JSON
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if t.Kind() == reflect.Map {
			w.path = append(w.path, step{name: name, key: true})
			e := w.value(v, t.Elem())
			w.path = w.path[:len(w.path)-1]
			if e != nil {
				return e
			}
			continue
		}
		f, ok := match(fields, name, w.o.MatchCase)
		if !ok {
			if w.o.IgnoreUnknown {
				continue
			}
			return &Error{Kind: UnknownField, Path: w.where(), Field: name, Known: names(fields)}
		}
		w.path = append(w.path, step{name: f.name})
		e := w.value(v, f.typ)
		w.path = w.path[:len(w.path)-1]
		if e != nil {
			return e
		}
	}
	return nil
}

// array walks raw, a JSON array, each element as elem.
func (w *walker) array(raw []byte, elem reflect.Type) *Error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // [
	for i := 0; dec.More(); i++ {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil // not reached: raw is valid JSON
		}
		w.path = append(w.path, step{index: i})
		e := w.value(v, elem)
		w.path = w.path[:len(w.path)-1]
		if e != nil {
			return e
		}
	}
	return nil
}

// valueKind names the JSON value raw starts, as encoding/json names it in
// its errors.
func valueKind(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
