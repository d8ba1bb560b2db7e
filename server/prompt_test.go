package server

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/internal/strictjson"
)

// The messages that list a body's fields list the prompt's.
func TestPromptBodyFieldsFollowTheType(t *testing.T) {
	if got := strictjson.Fields(reflect.TypeFor[promptBody]()); !slices.Equal(got, []string{"prompt"}) {
		t.Errorf("strictjson.Fields(promptBody) = %q, want prompt", got)
	}
}

// Fields other than prompt are ignored, whatever their value, as a client
// written for the hosted service may send some; the prompt is still checked.
func TestParsePromptIgnoresOtherFields(t *testing.T) {
	for _, body := range []string{
		`{"prompt":"Document it","model":"claude-sonnet-4-5"}`,
		`{"model":{"name":"x","temperature":0.2},"prompt":"Document it","tags":["a",1,null],"draft":true}`,
		`{"source":{"ref":"main"},"prompt":"Document it","prompt_version":2}`,
	} {
		got, bad := parsePrompt([]byte(body), 100)
		if bad != nil || got != "Document it" {
			t.Errorf("parsePrompt(%s) = %q, %+v; want the prompt, other fields ignored", body, got, bad)
		}
	}
}

func TestParsePromptAcceptsAPrompt(t *testing.T) {
	if got, bad := parsePrompt([]byte(`{"prompt":"line one\n\tline two\r\n"}`), 100); bad != nil || got != "line one\n\tline two\r\n" {
		t.Errorf("tabs and line breaks: %q, %v", got, bad)
	}
	for _, body := range []string{
		`{"prompt":"Document the --verbose flag"}`,
		" \n{\"prompt\": \"Document the --verbose flag\"}\n",
	} {
		got, bad := parsePrompt([]byte(body), 100)
		if bad != nil || got != "Document the --verbose flag" {
			t.Errorf("parsePrompt(%q) = %q, %v", body, got, bad)
		}
	}
}

func TestParsePromptRefusesBadBodiesNamingTheProblem(t *testing.T) {
	tests := []struct {
		body, want string
	}{
		{``, "request body is empty"},
		{`   `, "request body is empty"},
		{`{}`, `field "prompt" is required`},
		{`{"prompt":null}`, `field "prompt" is required`},
		{`{"prompt":""}`, `field "prompt" must not be empty`},
		{`{"prompt":"  \n"}`, `field "prompt" must not be empty`},
		{`{"prompt":42}`, `field "prompt" must be a string, not a JSON number`},
		{`{"prompt":["a"]}`, `field "prompt" must be a string, not a JSON array`},
		{`["prompt"]`, "request body must be a JSON object, not a JSON array"},
		{`"prompt"`, "request body must be a JSON object, not a JSON string"},
		{`{"model":"x"}`, `field "prompt" is required`},
		{`{"model":"x","prompt":7}`, `field "prompt" must be a string, not a JSON number`},
		{`null`, `field "prompt" is required`},
		{`42`, "request body must be a JSON object, not a JSON number"},
		{`{"prompt":"a"}{"prompt":"b"}`, "request body has data after the JSON object"},
		{`{"prompt":"a"`, "it ends too early"},
		{`{prompt:"a"}`, "request body is not valid JSON"},
		{"{\"prompt\":\"\xff\"}", "not valid UTF-8"},
		{`{"prompt":"` + strings.Repeat("é", 11) + `"}`, `field "prompt" is 11 characters long; the limit is 10`},
		{`{"prompt":"a\u0000b"}`, `contains the control character U+0000`},
		{`{"prompt":"a\u001bb"}`, `contains the control character U+001B`},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			_, bad := parsePrompt([]byte(tt.body), 10)
			if bad == nil || bad.Status != http.StatusBadRequest || !strings.Contains(bad.Message, tt.want) {
				t.Fatalf("parsePrompt(%q) = %+v, want a 400 containing %q", tt.body, bad, tt.want)
			}
		})
	}
}

// The limit counts characters, not bytes: a prompt of 10 two-byte
// characters fits a limit of 10.
func TestParsePromptLimitCountsCharacters(t *testing.T) {
	body := `{"prompt":"` + strings.Repeat("é", 10) + `"}`
	if _, bad := parsePrompt([]byte(body), 10); bad != nil {
		t.Fatalf("parsePrompt = %v, want the prompt accepted", bad)
	}
}

// FuzzPromptBody checks that no body makes the parser panic, that every
// refusal is a 400 with a message, and that an accepted prompt obeys the
// rules the store relies on.
func FuzzPromptBody(f *testing.F) {
	for _, seed := range []string{
		`{"prompt":"x"}`, `{}`, `{"prompt":""}`, `{"prompt":1}`, `[]`, `null`, ``,
		`{"prompt":"a","x":1}`, `{"prompt":"a"} trailing`, "{\"prompt\":\"\\u0000\"}",
		`{"prompt":"\ud800"}`, `{"Prompt":"case"}`, `{"prompt":"a","prompt":"b"}`,
		`{"prompt":"a","model":"claude-sonnet-4-5"}`, `{"model":{"x":[1,null]},"prompt":7}`, `{"model":"m"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		prompt, bad := parsePrompt(body, 50)
		if bad != nil {
			if bad.Status != http.StatusBadRequest || bad.Message == "" {
				t.Fatalf("parsePrompt(%q) refused with %d %q", body, bad.Status, bad.Message)
			}
			return
		}
		if strings.TrimSpace(prompt) == "" || utf8.RuneCountInString(prompt) > 50 || !utf8.ValidString(prompt) || strings.ContainsRune(prompt, 0) {
			t.Fatalf("parsePrompt(%q) accepted %q", body, prompt)
		}
	})
}
