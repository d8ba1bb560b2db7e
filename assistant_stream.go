package docsapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// The assistant answers in the AI SDK v5 "UI message stream" protocol:
// server-sent events whose data is one JSON object with a "type" (text-delta,
// tool-output-available, finish, ...), ending with "data: [DONE]". The types
// and their fields below are the ai package's (ui-message-chunks.ts, v5).

// AssistantEventType is the type of an event of an answer's stream, as sent.
// The protocol may add types: an unknown one is kept as sent, with its JSON
// in AssistantEvent.Raw, and never ends the stream.
type AssistantEventType string

// The event types of the AI SDK v5 UI message stream.
const (
	AssistantEventStart               AssistantEventType = "start"      // the message begins; ID is its ID
	AssistantEventStartStep           AssistantEventType = "start-step" // a step (one model call) begins
	AssistantEventTextStart           AssistantEventType = "text-start" // a text block begins; ID names it
	AssistantEventTextDelta           AssistantEventType = "text-delta" // Delta is the next piece of the text block ID
	AssistantEventTextEnd             AssistantEventType = "text-end"
	AssistantEventReasoningStart      AssistantEventType = "reasoning-start"
	AssistantEventReasoningDelta      AssistantEventType = "reasoning-delta" // Delta is the next piece of the reasoning block ID
	AssistantEventReasoningEnd        AssistantEventType = "reasoning-end"
	AssistantEventToolInputStart      AssistantEventType = "tool-input-start" // a tool call (ToolCallID, ToolName) begins
	AssistantEventToolInputDelta      AssistantEventType = "tool-input-delta" // Delta is the next piece of the call's input (JSON text)
	AssistantEventToolInputAvailable  AssistantEventType = "tool-input-available"
	AssistantEventToolInputError      AssistantEventType = "tool-input-error"
	AssistantEventToolOutputAvailable AssistantEventType = "tool-output-available" // the call's output; the search tool's results in Sources
	AssistantEventToolOutputError     AssistantEventType = "tool-output-error"
	AssistantEventSourceURL           AssistantEventType = "source-url"
	AssistantEventSourceDocument      AssistantEventType = "source-document"
	AssistantEventFile                AssistantEventType = "file"
	AssistantEventFinishStep          AssistantEventType = "finish-step"
	AssistantEventFinish              AssistantEventType = "finish" // the message is complete
	AssistantEventAbort               AssistantEventType = "abort"  // the server stopped the answer
	AssistantEventError               AssistantEventType = "error"  // ErrorText says what went wrong; the stream goes on
	AssistantEventMessageMetadata     AssistantEventType = "message-metadata"
)

// IsData reports whether the type is an application's own data part
// ("data-" and a name), whose JSON is in AssistantEvent.Raw.
func (t AssistantEventType) IsData() bool {
	return strings.HasPrefix(string(t), "data-")
}

// Known reports whether the type is one of the protocol's, a data part
// included.
func (t AssistantEventType) Known() bool {
	switch t {
	case AssistantEventStart, AssistantEventStartStep, AssistantEventTextStart, AssistantEventTextDelta,
		AssistantEventTextEnd, AssistantEventReasoningStart, AssistantEventReasoningDelta, AssistantEventReasoningEnd,
		AssistantEventToolInputStart, AssistantEventToolInputDelta, AssistantEventToolInputAvailable,
		AssistantEventToolInputError, AssistantEventToolOutputAvailable, AssistantEventToolOutputError,
		AssistantEventSourceURL, AssistantEventSourceDocument, AssistantEventFile, AssistantEventFinishStep,
		AssistantEventFinish, AssistantEventAbort, AssistantEventError, AssistantEventMessageMetadata:
		return true
	}
	return t.IsData()
}

// AssistantSearchTool is the name of the tool call whose output lists the
// sources an answer drew on.
const AssistantSearchTool = "search"

// AssistantEvent is one event of an answer's stream. Type says which fields
// it fills; Raw always holds the event as sent, for the fields the SDK does
// not read (a tool call's input, metadata, a data part's data).
type AssistantEvent struct {
	// Type is the event's type, as sent.
	Type AssistantEventType
	// ID is the text or reasoning block's ID (text-*, reasoning-*), the
	// message's ID (start), the source's ID (source-*), or a data part's.
	ID string
	// Delta is the next piece of text (text-delta, reasoning-delta) or of a
	// tool call's input (tool-input-delta).
	Delta string
	// ToolCallID identifies a tool call (tool-*).
	ToolCallID string
	// ToolName names the tool called (tool-*); for the events that do not
	// carry it (deltas and outputs), the name the call's start gave.
	ToolName string
	// Sources are the results of the search tool's call
	// (tool-output-available with ToolName "search"), or the one source of
	// a source-url (URL, Title) or source-document (Title) event.
	Sources []AnswerSource
	// ErrorText says what failed (error, tool-input-error, tool-output-error).
	ErrorText string
	// FinishReason is why the answer ended (finish), as sent: the AI SDK
	// sends stop, length, content-filter, tool-calls, error, other or
	// unknown, or none.
	FinishReason string
	// ThreadID is the thread's ID (finish), when the event carries one.
	ThreadID string
	// Raw is the event's JSON, as sent.
	Raw json.RawMessage
}

// AnswerSource is a page an answer drew on: one result of its search
// tool call.
type AnswerSource struct {
	// URL is the source's address, when it has one.
	URL string
	// Path is the page's path on the site, when the source gives one (see
	// AssistantService.Page). A link is URL, or Path when URL is empty.
	Path string
	// Title is the metadata's title, when it is a string.
	Title string
	// Content is the text the answer drew on.
	Content string
	// Metadata is what the service says about the source besides, as sent.
	Metadata map[string]any
}

// AssistantAnswer is a whole answer, as AnswerStream.Answer collects it.
type AssistantAnswer struct {
	// Text is the answer's text: the text blocks in order, a blank line
	// between two blocks.
	Text string
	// Sources are the results of the answer's search tool calls, in order.
	Sources []AnswerSource
	// ThreadID is the thread's ID: the X-Thread-Id header's, or else the
	// finish event's.
	ThreadID string
	// ThreadKey is the thread's secret: only the first answer of a new
	// thread has one. Keep it with ThreadID to continue the thread.
	ThreadKey ThreadKey
	// FinishReason is the finish event's reason, as sent.
	FinishReason string
}

// AnswerError reports the error events of an answer that otherwise came
// whole: the assistant could not answer, or not fully.
type AnswerError struct {
	// Method and Path identify the request.
	Method, Path string
	// Messages are the error events' texts, in order.
	Messages []string
}

// Error names the request and the events' texts.
func (e *AnswerError) Error() string {
	return "docsapi: " + e.Method + " " + e.Path + ": the assistant reported an error: " + strings.Join(e.Messages, "; ")
}

// maxStreamLine bounds a line of an answer's stream, and the data of one
// event: the events are small, so only a broken or hostile server sends
// more, and it must not make the reader hold it all.
const maxStreamLine = 1 << 20

// maxToolCalls bounds the tool calls whose names a stream remembers.
const maxToolCalls = 1024

// AnswerStream is an answer as it is written, returned by Ask. Read it once,
// with Events or Answer; either closes it at its end, or when the loop
// stops early. Otherwise Close it. It is not safe for concurrent use,
// except that Close may be called from another goroutine to stop a reader.
type AnswerStream struct {
	ctx          context.Context
	method, path string
	body         io.ReadCloser
	contentType  string
	release      context.CancelFunc
	lines        *bufio.Scanner

	threadID string
	key      ThreadKey

	closeOnce sync.Once
	closed    atomic.Bool
	used      bool
	started   bool // a line was read: a byte order mark is only skipped before it
	finished  bool
	finishID  string
	lastError string
	toolNames map[string]string
}

// takeStream is the pipeline's hand-over of the open response.
func (s *AnswerStream) takeStream(resp *http.Response, release context.CancelFunc) {
	s.body, s.release = resp.Body, release
	s.contentType = resp.Header.Get("Content-Type")
	s.threadID = resp.Header.Get("X-Thread-Id")
	s.key = NewThreadKey(resp.Header.Get("X-Thread-Key"))
	// The header map is the one WithResponse gives the caller: the key
	// leaves it, so that printing the response cannot show it.
	resp.Header.Del("X-Thread-Key")
	s.lines = bufio.NewScanner(resp.Body)
	s.lines.Buffer(make([]byte, 0, 4096), maxStreamLine)
	s.lines.Split(splitStreamLine)
}

// ThreadID is the thread's ID: the response's X-Thread-Id header, or, when
// it had none, the finish event's once it was read.
func (s *AnswerStream) ThreadID() string {
	if s.threadID != "" {
		return s.threadID
	}
	return s.finishID
}

// ThreadKey is the thread's secret, from the response's X-Thread-Key
// header: only the first answer of a new thread has one.
func (s *AnswerStream) ThreadKey() ThreadKey { return s.key }

// Close closes the stream's connection at once. It is safe to call more
// than once, and from another goroutine than the reader's, whose next read
// then fails.
func (s *AnswerStream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.body != nil {
			s.body.Close()
		}
		if s.release != nil {
			s.release()
		}
	})
	return nil
}

// Events returns the answer's events in order. The iteration ends after the
// stream's end, or with one error: a stream that ends before its finish
// event (an error wrapping io.ErrUnexpectedEOF: the answer is incomplete,
// not short), a line longer than 1 MiB, an event that breaks the protocol,
// or the context's end. Error events of the protocol are events
// (AssistantEventError), not errors: the stream goes on after them.
// Stopping the loop early closes the stream. A stream is read once: a
// second Events or Answer yields an error.
func (s *AnswerStream) Events() iter.Seq2[AssistantEvent, error] {
	return func(yield func(AssistantEvent, error) bool) {
		if s.used {
			yield(AssistantEvent{}, fmt.Errorf("docsapi: %s %s: the answer stream was already read; it is read once", s.method, s.path))
			return
		}
		s.used = true
		defer s.Close()
		for {
			ev, err := s.next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(AssistantEvent{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Answer reads the rest of the stream and returns the whole answer, then
// closes the stream. The answer is never nil, even with an error: it holds
// what came before it, and above all the thread's ID and key, which the
// service gives only once. The error is the stream's (see Events), or an
// *AnswerError when the stream came whole but reported errors.
func (s *AnswerStream) Answer() (*AssistantAnswer, error) {
	ans := new(AssistantAnswer)
	var text strings.Builder
	var errs []string
	size := 0
	var err error
	for ev, evErr := range s.Events() {
		if evErr != nil {
			err = evErr
			break
		}
		switch ev.Type {
		case AssistantEventTextStart:
			if text.Len() > 0 {
				text.WriteString("\n\n")
			}
		case AssistantEventTextDelta:
			text.WriteString(ev.Delta)
			size += len(ev.Delta)
		case AssistantEventToolOutputAvailable:
			if ev.ToolName == AssistantSearchTool {
				ans.Sources = append(ans.Sources, ev.Sources...)
				size += len(ev.Raw)
			}
		case AssistantEventError:
			errs = append(errs, ev.ErrorText)
		case AssistantEventFinish:
			ans.FinishReason = ev.FinishReason
		}
		if size > maxResponseBytes {
			err = fmt.Errorf("docsapi: %s %s: the answer is larger than %d bytes", s.method, s.path, maxResponseBytes)
			break
		}
	}
	ans.Text = text.String()
	ans.ThreadID = s.ThreadID()
	ans.ThreadKey = s.ThreadKey()
	if err == nil && len(errs) > 0 {
		err = &AnswerError{Method: s.method, Path: s.path, Messages: errs}
	}
	return ans, err
}

// next reads the next event. It returns io.EOF at the end of a stream that
// finished.
func (s *AnswerStream) next() (AssistantEvent, error) {
	data, err := s.nextData()
	if err != nil {
		return AssistantEvent{}, err
	}
	if string(data) == "[DONE]" {
		if !s.finished {
			return AssistantEvent{}, s.cut(nil)
		}
		return AssistantEvent{}, io.EOF
	}
	return s.parse(data)
}

// nextData reads lines up to the end of the next event that has data, as
// the server-sent events standard reads them: "field: value" lines, an
// empty line ending an event, comment lines starting with ":", several
// data lines joined by a line feed. Other fields (event, id, retry) mean
// nothing to the AI SDK's reader, nor here.
func (s *AnswerStream) nextData() ([]byte, error) {
	var data []byte
	hasData := false
	for s.lines.Scan() {
		line := s.lines.Bytes()
		if !s.started {
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		switch {
		case len(line) == 0:
			if hasData {
				return data, nil
			}
			continue
		case line[0] == ':':
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if hasData {
			data = append(data, '\n')
		}
		if len(data)+len(value) > maxStreamLine {
			return nil, fmt.Errorf("docsapi: %s %s: an event of the answer stream is larger than %d bytes", s.method, s.path, maxStreamLine)
		}
		data = append(data, value...)
		hasData = true
	}
	return nil, s.ended(s.lines.Err())
}

// ended is the error of a stream whose reading stopped with err (nil at
// the end of the body): io.EOF when the answer finished.
func (s *AnswerStream) ended(err error) error {
	switch {
	case err == nil && s.finished:
		return io.EOF
	case s.closed.Load():
		return fmt.Errorf("docsapi: %s %s: the answer stream was closed", s.method, s.path)
	case s.ctx.Err() != nil:
		return stopped(s.ctx, s.ctx.Err(), nil)
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("docsapi: %s %s: a line of the answer stream is longer than %d bytes", s.method, s.path, maxStreamLine)
	}
	return s.cut(err)
}

// cut is the error of a stream that ended before its finish event, with
// the read error err if there was one. It wraps io.ErrUnexpectedEOF: the
// answer is incomplete, and must not pass for a short one.
func (s *AnswerStream) cut(err error) error {
	msg := "docsapi: " + s.method + " " + s.path + ": the answer stream ended before its finish event"
	if s.lastError != "" {
		msg += fmt.Sprintf(" (its last error event: %q)", s.lastError)
	}
	if mediaType, _, _ := mime.ParseMediaType(s.contentType); mediaType != "text/event-stream" {
		msg += fmt.Sprintf(" (Content-Type %q, not text/event-stream)", s.contentType)
	}
	if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: %w", msg, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%s: %w: %w", msg, io.ErrUnexpectedEOF, err)
}

// parse reads one event's JSON. Only the fields of the event's type are
// read, so that a field another type would use cannot fail it; an unknown
// type, or a data part, is kept as sent.
func (s *AnswerStream) parse(data []byte) (AssistantEvent, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil || head.Type == nil {
		return AssistantEvent{}, fmt.Errorf("docsapi: %s %s: an event of the answer stream is not a JSON object with a type", s.method, s.path)
	}
	ev := AssistantEvent{Type: AssistantEventType(*head.Type), Raw: json.RawMessage(data)}
	var w struct {
		ID             string          `json:"id"`
		MessageID      string          `json:"messageId"`
		SourceID       string          `json:"sourceId"`
		Delta          string          `json:"delta"`
		InputTextDelta string          `json:"inputTextDelta"`
		ToolCallID     string          `json:"toolCallId"`
		ToolName       string          `json:"toolName"`
		ErrorText      string          `json:"errorText"`
		URL            string          `json:"url"`
		Title          string          `json:"title"`
		FinishReason   string          `json:"finishReason"`
		Output         json.RawMessage `json:"output"`
		ThreadID       json.RawMessage `json:"threadId"`
		Metadata       json.RawMessage `json:"messageMetadata"`
	}
	// target points into w for the fields of ev's type alone.
	var target any
	switch ev.Type {
	case AssistantEventStart:
		target = &struct {
			MessageID *string `json:"messageId"`
		}{&w.MessageID}
	case AssistantEventTextStart, AssistantEventTextEnd, AssistantEventReasoningStart, AssistantEventReasoningEnd:
		target = &struct {
			ID *string `json:"id"`
		}{&w.ID}
	case AssistantEventTextDelta, AssistantEventReasoningDelta:
		target = &struct {
			ID    *string `json:"id"`
			Delta *string `json:"delta"`
		}{&w.ID, &w.Delta}
	case AssistantEventToolInputStart, AssistantEventToolInputAvailable:
		target = &struct {
			ToolCallID *string `json:"toolCallId"`
			ToolName   *string `json:"toolName"`
		}{&w.ToolCallID, &w.ToolName}
	case AssistantEventToolInputDelta:
		target = &struct {
			ToolCallID     *string `json:"toolCallId"`
			InputTextDelta *string `json:"inputTextDelta"`
		}{&w.ToolCallID, &w.InputTextDelta}
	case AssistantEventToolInputError:
		target = &struct {
			ToolCallID *string `json:"toolCallId"`
			ToolName   *string `json:"toolName"`
			ErrorText  *string `json:"errorText"`
		}{&w.ToolCallID, &w.ToolName, &w.ErrorText}
	case AssistantEventToolOutputAvailable:
		target = &struct {
			ToolCallID *string          `json:"toolCallId"`
			Output     *json.RawMessage `json:"output"`
		}{&w.ToolCallID, &w.Output}
	case AssistantEventToolOutputError:
		target = &struct {
			ToolCallID *string `json:"toolCallId"`
			ErrorText  *string `json:"errorText"`
		}{&w.ToolCallID, &w.ErrorText}
	case AssistantEventSourceURL:
		target = &struct {
			SourceID *string `json:"sourceId"`
			URL      *string `json:"url"`
			Title    *string `json:"title"`
		}{&w.SourceID, &w.URL, &w.Title}
	case AssistantEventSourceDocument:
		target = &struct {
			SourceID *string `json:"sourceId"`
			Title    *string `json:"title"`
		}{&w.SourceID, &w.Title}
	case AssistantEventError:
		target = &struct {
			ErrorText *string `json:"errorText"`
		}{&w.ErrorText}
	case AssistantEventFinish:
		target = &struct {
			FinishReason *string          `json:"finishReason"`
			ThreadID     *json.RawMessage `json:"threadId"`
			Metadata     *json.RawMessage `json:"messageMetadata"`
		}{&w.FinishReason, &w.ThreadID, &w.Metadata}
	}
	if target != nil {
		if err := decodeWire("answer stream event "+string(ev.Type), data, target); err != nil {
			return AssistantEvent{}, fmt.Errorf("docsapi: %s %s: %w", s.method, s.path, err)
		}
	}
	if ev.Type.IsData() {
		// A data part's ID is optional, and its shape the application's:
		// one that is not a string is left in Raw.
		var d struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(data, &d) == nil {
			w.ID = d.ID
		}
	}

	ev.ToolCallID, ev.ErrorText, ev.FinishReason = w.ToolCallID, w.ErrorText, w.FinishReason
	ev.Delta = w.Delta + w.InputTextDelta // one of the two, as the type says
	ev.ID = w.ID + w.MessageID + w.SourceID
	ev.ToolName = w.ToolName
	switch ev.Type {
	case AssistantEventToolInputStart, AssistantEventToolInputAvailable, AssistantEventToolInputError:
		if s.toolNames == nil {
			s.toolNames = make(map[string]string)
		}
		if _, ok := s.toolNames[w.ToolCallID]; ok || len(s.toolNames) < maxToolCalls {
			s.toolNames[w.ToolCallID] = w.ToolName
		}
	case AssistantEventToolInputDelta, AssistantEventToolOutputError:
		ev.ToolName = s.toolNames[w.ToolCallID]
	case AssistantEventToolOutputAvailable:
		ev.ToolName = s.toolNames[w.ToolCallID]
		if ev.ToolName == AssistantSearchTool {
			ev.Sources = searchSources(w.Output)
		}
	case AssistantEventSourceURL:
		ev.Sources = []AnswerSource{{URL: w.URL, Title: w.Title}}
	case AssistantEventSourceDocument:
		ev.Sources = []AnswerSource{{Title: w.Title}}
	case AssistantEventError:
		s.lastError = w.ErrorText
	case AssistantEventFinish:
		s.finished = true
		ev.ThreadID = finishThreadID(w.ThreadID, w.Metadata)
		s.finishID = ev.ThreadID
	}
	return ev, nil
}

// finishThreadID reads the thread's ID from a finish event: its threadId,
// as the Assistant API documents it, or else its message metadata's.
func finishThreadID(threadID, metadata json.RawMessage) string {
	var id string
	if json.Unmarshal(threadID, &id) == nil && id != "" {
		return id
	}
	var m struct {
		ThreadID string `json:"threadId"`
	}
	if json.Unmarshal(metadata, &m) == nil {
		return m.ThreadID
	}
	return ""
}

// searchSources reads the search tool's output: a list of results, each
// with a url or a path, metadata with a title, and content. A tool's output
// is free-form, so what does not fit is left in the event's Raw.
func searchSources(output json.RawMessage) []AnswerSource {
	var items []json.RawMessage
	if json.Unmarshal(output, &items) != nil {
		return nil
	}
	sources := make([]AnswerSource, 0, len(items))
	for _, item := range items {
		var w struct {
			URL      string         `json:"url"`
			Path     string         `json:"path"`
			Content  string         `json:"content"`
			Metadata map[string]any `json:"metadata"`
		}
		if json.Unmarshal(item, &w) != nil {
			continue
		}
		sources = append(sources, AnswerSource{URL: w.URL, Path: w.Path, Title: metadataTitle(w.Metadata), Content: w.Content, Metadata: w.Metadata})
	}
	return sources
}

// splitStreamLine splits a stream into lines ending in CRLF, LF or CR, as
// server-sent events do. A CR at the end of what was read so far waits for
// the next byte, which may be its LF.
func splitStreamLine(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil
}
