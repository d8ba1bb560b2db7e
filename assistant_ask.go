package docsapi

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// AskParams is the body of Ask: the conversation so far, and where the
// question comes from.
type AskParams struct {
	// Messages is the conversation, oldest first, ending with the user's
	// question. Required: at least one.
	Messages []AskMessage
	// FP identifies the person asking, for the service's statistics: a user
	// ID of yours, or "anonymous", which is what an empty FP sends.
	FP string
	// ThreadID and ThreadKey continue a thread: both, as the first answer
	// of the thread gave them (AnswerStream.ThreadID and ThreadKey), or
	// neither, to start a new thread. The service answers a thread ID
	// without its key with 404, so Ask refuses one alone.
	ThreadID string
	// ThreadKey is the thread's secret; see ThreadID.
	ThreadKey ThreadKey
	// RetrievalPageSize is how many search results the answer draws on;
	// zero leaves it to the server (5, which the service advises).
	RetrievalPageSize int
	// Filter narrows the search the answer draws on; its zero value
	// filters nothing.
	Filter AskFilter
	// Context is what the user pointed at: code or selected text.
	Context []AskContext
	// CurrentPath is the path of the page the user is reading, at most 200
	// characters; empty sends none.
	CurrentPath string
}

// AskMessage is one message of a conversation.
type AskMessage struct {
	// ID identifies the message; empty makes Ask send a random one.
	ID string
	// Role is who wrote it: AssistantRoleUser (what an empty Role sends),
	// AssistantRoleAssistant or AssistantRoleSystem.
	Role AssistantRole
	// Text is the message. Required.
	Text string
	// CreatedAt is when it was written; zero sends none.
	CreatedAt time.Time
}

// AssistantRoleSystem is the role of a system message in AskParams. The
// conversations export documents only user and assistant, so Known does not
// count it.
const AssistantRoleSystem AssistantRole = "system"

// AskFilter narrows the search an answer draws on. Empty fields filter
// nothing.
type AskFilter struct {
	// Version is a documentation version.
	Version string
	// Language is a content language.
	Language string
	// Groups are the documentation groups the user may read.
	Groups []string
}

// AskContextType says what an AskContext holds.
type AskContextType string

// The context types the Assistant API documents.
const (
	AskContextCode          AskContextType = "code"
	AskContextTextSelection AskContextType = "textSelection"
)

// Known reports whether the type is one the Assistant API documents.
func (t AskContextType) Known() bool {
	return t == AskContextCode || t == AskContextTextSelection
}

// AskContext is something the user pointed at when asking.
type AskContext struct {
	// Type is AskContextCode or AskContextTextSelection. Required.
	Type AskContextType
	// Value is the code or the selected text. Required.
	Value string
	// Path is the file or page it comes from; empty sends none.
	Path string
	// ElementID identifies the element of the page that holds it; empty
	// sends none.
	ElementID string
}

// maxCurrentPath is the documented bound of currentPath, in the UTF-16
// code units a JavaScript service counts its "characters" in.
const maxCurrentPath = 200

type askWire struct {
	FP                string           `json:"fp"`
	ThreadID          string           `json:"threadId,omitempty"`
	ThreadKey         string           `json:"threadKey,omitempty"`
	Messages          []askMessageWire `json:"messages"`
	RetrievalPageSize int              `json:"retrievalPageSize,omitempty"`
	Filter            *filterWire      `json:"filter,omitempty"`
	Context           []askContextWire `json:"context,omitempty"`
	CurrentPath       string           `json:"currentPath,omitempty"`
}

type askMessageWire struct {
	ID        string         `json:"id"`
	Role      AssistantRole  `json:"role"`
	CreatedAt string         `json:"createdAt,omitempty"`
	Parts     []textPartWire `json:"parts"`
}

type textPartWire struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type askContextWire struct {
	Type      AskContextType `json:"type"`
	Value     string         `json:"value"`
	Path      string         `json:"path,omitempty"`
	ElementID string         `json:"elementId,omitempty"`
}

// wire checks p and returns the body Ask sends. The messages the SDK names
// get random IDs, which the AI SDK's clients also send.
func (p AskParams) wire() (*askWire, error) {
	switch {
	case len(p.Messages) == 0:
		return nil, invalid("messages", "is empty: ask at least one message")
	case p.ThreadID != "" && p.ThreadKey.IsZero():
		return nil, invalid("threadKey", "is empty: a thread is continued with its ID and its key, which its first answer gave")
	case p.ThreadID == "" && !p.ThreadKey.IsZero():
		// The message names neither value: the key is a secret.
		return nil, invalid("threadId", "is empty: a thread key needs its thread's ID")
	case p.ThreadID != "" && checkID("threadId", p.ThreadID) != nil:
		return nil, checkID("threadId", p.ThreadID)
	case strings.TrimSpace(p.ThreadKey.Value()) != p.ThreadKey.Value():
		return nil, invalid("threadKey", "has leading or trailing white space")
	case p.RetrievalPageSize < 0:
		return nil, invalid("retrievalPageSize", "must not be negative, got %d", p.RetrievalPageSize)
	case utf16Len(p.CurrentPath) > maxCurrentPath:
		return nil, invalid("currentPath", "is longer than %d characters", maxCurrentPath)
	}
	if err := checkGroups("filter.groups", p.Filter.Groups); err != nil {
		return nil, err
	}
	w := &askWire{
		FP:                p.FP,
		ThreadID:          p.ThreadID,
		ThreadKey:         p.ThreadKey.Value(),
		Messages:          make([]askMessageWire, len(p.Messages)),
		RetrievalPageSize: p.RetrievalPageSize,
		Filter:            newFilterWire(p.Filter.Version, p.Filter.Language, "", p.Filter.Groups),
		CurrentPath:       p.CurrentPath,
	}
	if strings.TrimSpace(w.FP) == "" {
		w.FP = "anonymous"
	}
	for i, m := range p.Messages {
		switch {
		case strings.TrimSpace(m.Text) == "":
			return nil, invalid(fmt.Sprintf("messages[%d].text", i), "is empty")
		case !utf8.ValidString(m.Text):
			return nil, invalid(fmt.Sprintf("messages[%d].text", i), "is not valid UTF-8")
		}
		mw := askMessageWire{ID: m.ID, Role: m.Role, Parts: []textPartWire{{Type: "text", Text: m.Text}}}
		if mw.ID == "" {
			mw.ID = rand.Text()
		}
		if mw.Role == "" {
			mw.Role = AssistantRoleUser
		}
		if !m.CreatedAt.IsZero() {
			mw.CreatedAt = m.CreatedAt.UTC().Format(time.RFC3339Nano)
		}
		w.Messages[i] = mw
	}
	for i, c := range p.Context {
		switch {
		case c.Type == "":
			return nil, invalid(fmt.Sprintf("context[%d].type", i), "is empty")
		case c.Value == "":
			return nil, invalid(fmt.Sprintf("context[%d].value", i), "is empty")
		}
		w.Context = append(w.Context, askContextWire(c))
	}
	return w, nil
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

// Ask asks the site's assistant (POST /v2/assistant/{domain}/message) and
// returns its answer as a stream, once the response's headers arrived:
// range over Events for the answer as it is written, or call Answer for
// the whole of it. The caller must read the stream to its end or Close it;
// ranging over Events or calling Answer does both.
//
// ctx governs the whole answer: cancelling it closes the stream at once.
// The client's timeout (DefaultTimeout, or the Timeout of WithHTTPClient's
// client) bounds only the wait for the response's headers, so that a long
// answer is not cut; give ctx a deadline to bound the answer.
//
// Ask is a write: it is retried, as Create is, only after a refused
// connection or a 429, and never once the answer began. An error before
// the answer is an *APIError (or a transport error) as for any call; a
// stream cut before its finish is an error of the stream.
//
// A new thread's ID and key come with the answer's headers
// (AnswerStream.ThreadID, ThreadKey): keep both to continue the thread, as
// the key is given only once. The key is removed from the response's
// headers (see WithResponse), and never printed or logged by the SDK.
func (s *AssistantService) Ask(ctx context.Context, domain string, params AskParams, opts ...RequestOption) (*AnswerStream, error) {
	if err := checkID("domain", domain); err != nil {
		return nil, err
	}
	body, err := params.wire()
	if err != nil {
		return nil, err
	}
	path := discoveryPath("/v2/assistant/", domain) + "/message"
	stream := &AnswerStream{ctx: ctx, method: http.MethodPost, path: path}
	req := apiRequest{method: http.MethodPost, path: path, body: body, key: assistantKey, stream: stream, scrub: body.ThreadKey}
	if err := s.client.do(ctx, req, opts, nil); err != nil {
		return nil, err
	}
	return stream, nil
}

// Answer asks as Ask does and reads the whole answer, for callers that do
// not show it as it is written. See AnswerStream.Answer for what it returns.
func (s *AssistantService) Answer(ctx context.Context, domain string, params AskParams, opts ...RequestOption) (*AssistantAnswer, error) {
	stream, err := s.Ask(ctx, domain, params, opts...)
	if err != nil {
		return nil, err
	}
	return stream.Answer()
}

// ThreadKey is the secret of an assistant thread: with the thread's ID it
// reads and continues the conversation. The service gives it once, with the
// first answer of a thread. Its printed forms (every fmt verb, slog, JSON
// and text encodings) are "[REDACTED]", or "" for no key, so that it does
// not reach a log by accident; Value returns the key itself, to store, and
// NewThreadKey makes one from a stored key. The zero value is no key.
type ThreadKey struct {
	// key is behind a pointer: fmt prints a pointer inside a value as an
	// address, so even a verb that prints fields without calling methods
	// (%p of a ThreadKey or of a struct holding one) cannot reach it.
	key *string
}

// NewThreadKey returns the thread key key, as X-Thread-Key gave it; ""
// is no key.
func NewThreadKey(key string) ThreadKey {
	if key == "" {
		return ThreadKey{}
	}
	return ThreadKey{key: &key}
}

// Value returns the key itself, to store with the thread's ID.
func (k ThreadKey) Value() string {
	if k.key == nil {
		return ""
	}
	return *k.key
}

// IsZero reports whether k is no key.
func (k ThreadKey) IsZero() bool { return k.key == nil || *k.key == "" }

// Equal reports whether k and other are the same key.
func (k ThreadKey) Equal(other ThreadKey) bool { return k.Value() == other.Value() }

func (k ThreadKey) redacted() string {
	if k.IsZero() {
		return ""
	}
	return "[REDACTED]"
}

// String returns the redacted form.
func (k ThreadKey) String() string { return k.redacted() }

// GoString returns the redacted form, quoted.
func (k ThreadKey) GoString() string { return `"` + k.redacted() + `"` }

// LogValue logs the redacted form.
func (k ThreadKey) LogValue() slog.Value { return slog.StringValue(k.redacted()) }

// MarshalText encodes the redacted form, so that JSON of a value holding
// the key does not hold it; store Value instead.
func (k ThreadKey) MarshalText() ([]byte, error) { return []byte(k.redacted()), nil }

// Format prints the redacted form for every verb, including %x and %q,
// which would otherwise print the key.
func (k ThreadKey) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, k.GoString())
		return
	}
	fmt.Fprint(f, k.redacted())
}
