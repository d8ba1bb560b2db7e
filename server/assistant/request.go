package assistant

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/searchresult"
	"github.com/docsapi/docsapi-go/server/internal/strictjson"
	"github.com/docsapi/docsapi-go/server/store"
)

// bodyOptions decode the request as the /discovery endpoints decode
// theirs: the hosted document closes no object, so fields it does not list
// are ignored (the AI SDK's clients send more: message metadata, the
// parts of earlier answers); names match as written; a known field of the
// wrong type is refused, naming it.
var bodyOptions = strictjson.Options{IgnoreUnknown: true, MatchCase: true}

// The request's bounds that are no settings: what the hosted API
// documents, or sizes far past any real value.
const (
	// DefaultRetrievalPageSize is the sections an answer draws on when the
	// request names no retrievalPageSize, as the hosted API advises.
	DefaultRetrievalPageSize = 5
	// MaxCurrentPath is the hosted bound of currentPath, in the UTF-16
	// code units JavaScript counts characters in.
	MaxCurrentPath = 200
	maxFPChars     = 256
	maxElementID   = 256
	maxIDChars     = 256
)

// body is the request: the hosted shape of POST
// /discovery/v2/assistant/{domain}/message.
type body struct {
	FP        *string   `json:"fp"`
	ThreadID  *string   `json:"threadId"`
	ThreadKey *string   `json:"threadKey"`
	Messages  []message `json:"messages"`
	// RetrievalPageSize is a float so that 2.5 is refused as not an
	// integer, not as not a number.
	RetrievalPageSize *float64             `json:"retrievalPageSize"`
	Filter            *searchresult.Filter `json:"filter"`
	Context           []contextIn          `json:"context"`
	CurrentPath       *string              `json:"currentPath"`
}

type message struct {
	ID    *string `json:"id"`
	Role  *string `json:"role"`
	Parts []part  `json:"parts"`
}

// part is a part of a message. Only text parts are read; the others (an
// earlier answer's tool calls, steps, sources) are what a client sends
// back of answers, which the server takes from its own record instead.
type part struct {
	Type *string `json:"type"`
	Text *string `json:"text"`
}

type contextIn struct {
	Type      *string `json:"type"`
	Value     *string `json:"value"`
	Path      *string `json:"path"`
	ElementID *string `json:"elementId"`
}

// ask is a request once checked.
type ask struct {
	fp                  string
	threadID, threadKey string
	followUp            bool // threadId or threadKey was sent
	question            string
	pageSize            int
	version, language   string
	context             []contextItem
	currentPath         string
}

type contextItem struct {
	Type, Value, Path, ElementID string
}

// parse checks b against the limits and returns the request it asks.
func parse(b body, l Limits) (ask, *input.Problem) {
	var a ask
	switch {
	case b.FP == nil:
		return a, input.Invalid(`field "fp" is required: "anonymous" or the reader's ID`)
	case strings.TrimSpace(*b.FP) == "":
		return a, input.Invalid(`field "fp" must not be blank: send "anonymous" or the reader's ID`)
	}
	if p := input.TextProblem("fp", *b.FP, maxFPChars, false); p != "" {
		return a, input.Invalid("%s", p)
	}
	a.fp = *b.FP
	if b.ThreadID != nil || b.ThreadKey != nil {
		a.followUp = true
		if b.ThreadID != nil {
			a.threadID = *b.ThreadID
		}
		if b.ThreadKey != nil {
			a.threadKey = *b.ThreadKey
		}
	}
	q, p := question(b.Messages, l)
	if p != nil {
		return a, p
	}
	a.question = q
	a.pageSize = DefaultRetrievalPageSize
	if b.RetrievalPageSize != nil {
		n := *b.RetrievalPageSize
		if n != math.Trunc(n) || n < 1 || n > store.MaxDocHits {
			return a, input.Invalid(`field "retrievalPageSize" must be an integer from 1 to %d, got %v`, store.MaxDocHits, n)
		}
		a.pageSize = int(n)
	}
	var narrowed store.DocsQuery
	b.Filter.Narrow(&narrowed)
	a.version, a.language = narrowed.Version, narrowed.Language
	if len(b.Context) > l.MaxContextItems {
		return a, input.Invalid(`field "context" has %d items; at most %d are allowed (the cap on context items)`, len(b.Context), l.MaxContextItems)
	}
	for i, c := range b.Context {
		item, p := contextOf(i, c, l)
		if p != nil {
			return a, p
		}
		a.context = append(a.context, item)
	}
	if b.CurrentPath != nil {
		cp := *b.CurrentPath
		if n := utf16Len(cp); n > MaxCurrentPath {
			return a, input.Invalid(`field "currentPath" is %d characters long; at most %d are allowed`, n, MaxCurrentPath)
		}
		if p := input.TextProblem("currentPath", cp, MaxCurrentPath, false); p != "" {
			return a, input.Invalid("%s", p)
		}
		a.currentPath = cp
	}
	return a, nil
}

// question returns the text of the last user message, the question. The
// other messages are not read: the conversation so far is the thread's
// record, which a client cannot forge, not what it sends.
func question(ms []message, l Limits) (string, *input.Problem) {
	if len(ms) == 0 {
		return "", input.Invalid(`field "messages" is required: the conversation, ending with the reader's question`)
	}
	last := -1
	for i, m := range ms {
		switch {
		case m.Role == nil:
			return "", input.Invalid(`field "messages[%d].role" is required: user, assistant or system`, i)
		case *m.Role != "user" && *m.Role != "assistant" && *m.Role != "system":
			return "", input.Invalid(`field "messages[%d].role" must be user, assistant or system, got %q`, i, cut(*m.Role, 40))
		case m.ID != nil && utf8.RuneCountInString(*m.ID) > maxIDChars:
			return "", input.Invalid(`field "messages[%d].id" is longer than %d characters`, i, maxIDChars)
		case *m.Role == "user":
			last = i
		}
	}
	if last < 0 {
		return "", input.Invalid(`field "messages" holds no message of role user: the last one is the question`)
	}
	var texts []string
	for _, p := range ms[last].Parts {
		if p.Type != nil && *p.Type == "text" && p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	q := strings.Join(texts, "\n")
	field := fmt.Sprintf("messages[%d].parts", last)
	if strings.TrimSpace(q) == "" {
		return "", input.Invalid(`field %q holds no text: the question is the last user message's text parts ({"type": "text", "text": ...})`, field)
	}
	if n := utf8.RuneCountInString(q); n > l.MaxQuestionChars {
		return "", input.Invalid(`field %q: the question is %d characters long; at most %d are allowed (the cap on a question's length)`, field, n, l.MaxQuestionChars)
	}
	if p := input.TextProblem(field, q, l.MaxQuestionChars, true); p != "" {
		return "", input.Invalid("%s", p)
	}
	return q, nil
}

// contextOf checks the i-th context item.
func contextOf(i int, c contextIn, l Limits) (contextItem, *input.Problem) {
	var item contextItem
	at := func(f string) string { return fmt.Sprintf("context[%d].%s", i, f) }
	switch {
	case c.Type == nil:
		return item, input.Invalid(`field %q is required: code or textSelection`, at("type"))
	case *c.Type != "code" && *c.Type != "textSelection":
		return item, input.Invalid(`field %q must be code or textSelection, got %q`, at("type"), cut(*c.Type, 40))
	case c.Value == nil:
		return item, input.Invalid(`field %q is required: the code or the selected text`, at("value"))
	}
	if n := utf8.RuneCountInString(*c.Value); n > l.MaxContextChars {
		return item, input.Invalid(`field %q is %d characters long; at most %d are allowed (the cap on a context item's length)`, at("value"), n, l.MaxContextChars)
	}
	if p := input.TextProblem(at("value"), *c.Value, l.MaxContextChars, true); p != "" {
		return item, input.Invalid("%s", p)
	}
	item.Type, item.Value = *c.Type, *c.Value
	if c.Path != nil {
		if p := input.TextProblem(at("path"), *c.Path, input.MaxPathBytes, false); p != "" {
			return item, input.Invalid("%s", p)
		}
		item.Path = *c.Path
	}
	if c.ElementID != nil {
		if p := input.TextProblem(at("elementId"), *c.ElementID, maxElementID, false); p != "" {
			return item, input.Invalid("%s", p)
		}
		item.ElementID = *c.ElementID
	}
	return item, nil
}

// utf16Len is the length of s as JavaScript counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// cut shortens s, something a client sent, to at most n runes for a
// message.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
