// Package input is what the server accepts of a request's input, for every
// feature alike: a body read within its bound, JSON decoded strictly (by
// package strictjson) with messages that name the field and list the
// fields known, and the checks of text a client sends (page paths, free
// text) before it is stored and shown.
package input

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/internal/strictjson"
)

// Problem is what is wrong with a request's input: the status to answer
// (400, or 413 for a body too large) and a message naming the problem.
type Problem struct {
	Status  int
	Message string
}

func (p *Problem) Error() string { return p.Message }

// Invalid is a 400 saying what fmt.Sprintf(format, args...) says.
func Invalid(format string, args ...any) *Problem {
	return &Problem{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// ReadBody reads r's body, of at most maxBytes: 413 past it.
func ReadBody(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, *Problem) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &Problem{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", maxBytes)}
	}
	if err != nil {
		return nil, Invalid("cannot read the request body")
	}
	return body, nil
}

// DecodeJSON decodes body, one JSON object, into v (a pointer to a
// struct): valid UTF-8, no unknown field (unless o says otherwise), no
// wrong type, no trailing data. Its problem names the field, and for an
// unknown one lists the fields of the object it is in.
func DecodeJSON(body []byte, v any, o strictjson.Options) *Problem {
	if !utf8.Valid(body) {
		return Invalid("request body is not valid UTF-8")
	}
	err := strictjson.Decode(body, v, o)
	if err == nil {
		return nil
	}
	var e *strictjson.Error
	if !errors.As(err, &e) {
		return Invalid("request body is not valid JSON: %v", err)
	}
	switch e.Kind {
	case strictjson.Empty:
		return Invalid("request body is empty; send a JSON object with the fields %s", QuoteFields(strictjson.Fields(reflect.TypeOf(v))))
	case strictjson.Syntax:
		return Invalid("request body is not valid JSON (at byte %d): %v", e.Offset, e.Err)
	case strictjson.Truncated:
		return Invalid("request body is not valid JSON: it ends too early")
	case strictjson.Trailing:
		return Invalid("request body has data after the JSON object")
	case strictjson.WrongType:
		if e.Field == "" {
			return Invalid("request body must be a JSON object, not a JSON %s", e.Value)
		}
		return Invalid("field %q must be %s, not a JSON %s", e.Field, strictjson.KindOf(e.Want), e.Value)
	case strictjson.UnknownField:
		at := ""
		if e.Path != "" {
			at = e.Path + ": "
		}
		switch len(e.Known) {
		case 0:
			return Invalid("%sunknown field %q", at, e.Field)
		case 1:
			return Invalid("%sunknown field %q; the only field is %q", at, e.Field, e.Known[0])
		}
		return Invalid("%sunknown field %q; the fields are %s", at, e.Field, QuoteFields(e.Known))
	}
	return Invalid("request body is not valid JSON: %v", e.Err)
}

// QuoteFields writes field names as a message lists them: "a", "b", "c".
func QuoteFields(fields []string) string {
	quoted := make([]string, len(fields))
	for i, f := range fields {
		quoted[i] = strconv.Quote(f)
	}
	return strings.Join(quoted, ", ")
}
