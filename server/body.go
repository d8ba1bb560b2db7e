package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// badRequest is an input problem, answered 400 (or Status) with Message.
type badRequest struct {
	Status  int
	Message string
}

func (e *badRequest) Error() string { return e.Message }

func invalidInput(format string, args ...any) *badRequest {
	return &badRequest{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// promptBody is the body of create and message: {"prompt": "..."}. Other
// fields are ignored, not refused: a client written for the hosted service
// may send some (a "model", say), as the SDK ignores fields of responses it
// does not know.
type promptBody struct {
	Prompt *string `json:"prompt"`
}

// readPrompt reads and checks a {"prompt"} body: the body bound, a JSON
// object without wrong types or trailing data, a prompt that is present,
// not blank, valid UTF-8 and within maxLength characters. Errors name the
// field and say what is wrong.
func readPrompt(w http.ResponseWriter, r *http.Request, maxBytes int64, maxLength int) (string, *badRequest) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return "", &badRequest{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", maxBytes)}
	}
	if err != nil {
		return "", invalidInput("cannot read the request body: %v", err)
	}
	return parsePrompt(body, maxLength)
}

func parsePrompt(body []byte, maxLength int) (string, *badRequest) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", invalidInput(`request body is empty; send {"prompt": "..."}`)
	}
	if !utf8.Valid(body) {
		return "", invalidInput("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var b promptBody
	if err := dec.Decode(&b); err != nil {
		return "", describeJSONError(err, nil)
	}
	if dec.More() {
		return "", invalidInput("request body has data after the JSON object")
	}
	switch {
	case b.Prompt == nil:
		return "", invalidInput(`field "prompt" is required`)
	case strings.TrimSpace(*b.Prompt) == "":
		return "", invalidInput(`field "prompt" must not be empty`)
	}
	if n := utf8.RuneCountInString(*b.Prompt); n > maxLength {
		return "", invalidInput(`field "prompt" is %d characters long; the limit is %d`, n, maxLength)
	}
	// Tabs and line breaks belong in prompts; other control characters do
	// not, and NUL cannot even be stored by PostgreSQL.
	if i := strings.IndexFunc(*b.Prompt, func(r rune) bool {
		return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString((*b.Prompt)[i:])
		return "", invalidInput(`field "prompt" contains the control character U+%04X`, r)
	}
	return *b.Prompt, nil
}

// jsonKind names the JSON value a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
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

// describeJSONError turns encoding/json's errors, which name Go types, into
// messages about the request's JSON. fields are the fields of the object
// in which an unknown field was found, for the message to list them.
func describeJSONError(err error, fields []string) *badRequest {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return invalidInput("field %q must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr):
		return invalidInput("request body must be a JSON object, not a JSON %s", typeErr.Value)
	case errors.As(err, &syntaxErr):
		return invalidInput("request body is not valid JSON (at byte %d): %v", syntaxErr.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidInput("request body is not valid JSON: it ends too early")
	}
	if field, ok := unknownField(err); ok {
		if len(fields) == 1 {
			return invalidInput("unknown field %s; the only field is %q", field, fields[0])
		}
		return invalidInput("unknown field %s; the fields are %s", field, quoteFields(fields))
	}
	return invalidInput("request body is not valid JSON: %v", err)
}

// unknownField returns the name, quoted, of the field that err, an error of
// a json.Decoder with DisallowUnknownFields, refuses as unknown. The error
// has no type of its own (encoding/json makes it with fmt.Errorf), so its
// wording is all there is to tell it by.
func unknownField(err error) (string, bool) {
	return strings.CutPrefix(err.Error(), "json: unknown field ")
}

// jsonFields lists the JSON names of the fields of the struct type t, in
// order. Taking them from the type that a body is decoded into keeps the
// messages that list them in step with what is decoded.
func jsonFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
			continue
		case name == "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// quoteFields writes field names as a message lists them: "a", "b", "c".
func quoteFields(fields []string) string {
	quoted := make([]string, len(fields))
	for i, f := range fields {
		quoted[i] = strconv.Quote(f)
	}
	return strings.Join(quoted, ", ")
}
