package strictjson

import (
	"reflect"
	"strings"
)

// field is a field of a struct as JSON names it.
type field struct {
	name string
	typ  reflect.Type
}

// Fields lists the JSON names of the fields of the struct type t (a
// pointer is followed), in order: the names an object decoded into t may
// hold, and those an UnknownField lists. Taking them from the type keeps
// the messages that list them in step with what is decoded.
func Fields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return names(fieldsOf(t))
}

// fieldsOf lists the fields of the struct t as encoding/json decodes them:
// exported fields under their tag's name, or their own without one; none
// tagged "-"; the fields of an embedded struct without a name as its own.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, fieldsOf(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name: name, typ: f.Type})
	}
	return out
}

func names(fields []field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

// match finds the field a name sent means: the one of that name, else,
// unless matchCase, the first whose name differs only in case (as
// encoding/json, whose rule is bytes.EqualFold's).
func match(fields []field, name string, matchCase bool) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	if !matchCase {
		for _, f := range fields {
			if strings.EqualFold(f.name, name) {
				return f, true
			}
		}
	}
	return field{}, false
}
