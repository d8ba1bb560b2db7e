package server

import (
	"bytes"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
)

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
func readPrompt(w http.ResponseWriter, r *http.Request, maxBytes int64, maxLength int) (string, *input.Problem) {
	body, bad := input.ReadBody(w, r, maxBytes)
	if bad != nil {
		return "", bad
	}
	return parsePrompt(body, maxLength)
}

func parsePrompt(body []byte, maxLength int) (string, *input.Problem) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", input.Invalid(`request body is empty; send {"prompt": "..."}`)
	}
	var b promptBody
	if bad := input.DecodeJSON(body, &b, strictjson.Options{IgnoreUnknown: true}); bad != nil {
		return "", bad
	}
	switch {
	case b.Prompt == nil:
		return "", input.Invalid(`field "prompt" is required`)
	case strings.TrimSpace(*b.Prompt) == "":
		return "", input.Invalid(`field "prompt" must not be empty`)
	}
	if n := utf8.RuneCountInString(*b.Prompt); n > maxLength {
		return "", input.Invalid(`field "prompt" is %d characters long; the limit is %d`, n, maxLength)
	}
	// Tabs and line breaks belong in prompts; other control characters do
	// not, and NUL cannot even be stored by PostgreSQL.
	if i := strings.IndexFunc(*b.Prompt, func(r rune) bool {
		return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString((*b.Prompt)[i:])
		return "", input.Invalid(`field "prompt" contains the control character U+%04X`, r)
	}
	return *b.Prompt, nil
}
