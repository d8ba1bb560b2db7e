package docsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// decodeWire unmarshals a response into one of the SDK's wire types. A type
// mismatch is reworded to name the API's field and the JSON kinds: the
// standard message names the SDK's internal types, which mean nothing to the
// reader of a log.
func decodeWire(what string, data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err
	}
	if typeErr.Type == countType {
		// A count's own error: Value holds the number and what is wrong
		// with it ("1.5 is not a whole number").
		if typeErr.Field == "" {
			return fmt.Errorf("docsapi: %s: count %s", what, typeErr.Value)
		}
		return fmt.Errorf("docsapi: %s field %q: %s", what, typeErr.Field, typeErr.Value)
	}
	if typeErr.Field == "" {
		return fmt.Errorf("docsapi: %s: expected %s, got JSON %s", what, jsonKind(typeErr.Type), typeErr.Value)
	}
	return fmt.Errorf("docsapi: %s field %q: expected %s, got JSON %s", what, typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
}

func missingField(what, field string) error {
	return fmt.Errorf("docsapi: %s: required field %q is missing or null", what, field)
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another type"
}

// optString is a nullable JSON string that also records whether its field
// was there at all, for the one field whose absence must not pass for null:
// the searches export's nextCursor, the only sign of its last page.
type optString struct {
	s     *string // nil for null
	found bool
}

func (o *optString) UnmarshalJSON(b []byte) error {
	o.found = true
	if string(b) == "null" {
		o.s = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err // an *UnmarshalTypeError, which encoding/json gives the field's path
	}
	o.s = &s
	return nil
}
