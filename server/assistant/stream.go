package assistant

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// The answer is an AI SDK UI message stream (the "ai" package's
// ui-message-chunks.ts): server-sent events, each "data: " and one JSON
// object, a "type" and that type's fields, ending with "data: [DONE]".
// The ai package validates every chunk against its schema, so a chunk
// holds only fields of its type's schema, with their types.

// streamHeaders are the stream's response headers, as the ai package's
// createUIMessageStreamResponse sets them.
var streamHeaders = [][2]string{
	{"Content-Type", "text/event-stream"},
	{"Cache-Control", "no-cache"},
	{"X-Vercel-Ai-Ui-Message-Stream", "v1"},
	// nginx, and proxies that follow it, would otherwise hold the
	// answer back until it is whole.
	{"X-Accel-Buffering", "no"},
	{"X-Content-Type-Options", "nosniff"},
}

// Finish reasons the ai package's finish chunk accepts.
const (
	finishStop          = "stop"
	finishLength        = "length"
	finishContentFilter = "content-filter"
	finishError         = "error"
	finishOther         = "other"
)

type startChunk struct {
	Type      string `json:"type"` // start
	MessageID string `json:"messageId"`
}

// typeChunk is a chunk of a type alone: start-step, finish-step.
type typeChunk struct {
	Type string `json:"type"`
}

type toolInputStartChunk struct {
	Type       string `json:"type"` // tool-input-start
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
}

type toolInputAvailableChunk struct {
	Type       string `json:"type"` // tool-input-available
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Input      any    `json:"input"`
}

type toolOutputAvailableChunk struct {
	Type       string `json:"type"` // tool-output-available
	ToolCallID string `json:"toolCallId"`
	Output     any    `json:"output"`
}

// textChunk is text-start and text-end.
type textChunk struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type textDeltaChunk struct {
	Type  string `json:"type"` // text-delta
	ID    string `json:"id"`
	Delta string `json:"delta"`
}

type errorChunk struct {
	Type      string `json:"type"` // error
	ErrorText string `json:"errorText"`
}

type finishChunk struct {
	Type            string         `json:"type"` // finish
	FinishReason    string         `json:"finishReason"`
	MessageMetadata finishMetadata `json:"messageMetadata"`
}

// finishMetadata is the answer's message metadata: the thread's ID, which
// clients send back as threadId to follow up (the SDK reads it here when
// the headers did not carry it).
type finishMetadata struct {
	ThreadID string `json:"threadId"`
}

// streamWriter writes the events of one answer, each flushed as it is
// written: a reader sees every delta as the model sends it.
type streamWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error // the first failed write: the client left, nothing more is sent
}

func newStreamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{w: w, rc: http.NewResponseController(w)}
}

// open writes the status and the headers. It moves the connection's
// write deadline to the answer's own bound: a server's WriteTimeout is
// set for answers written at once (serve's is a minute), and a model may
// stream for longer.
func (s *streamWriter) open(extra http.Header, writeFor time.Duration) {
	if err := s.rc.SetWriteDeadline(time.Now().Add(writeFor)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
	}
	h := s.w.Header()
	for _, kv := range streamHeaders {
		h.Set(kv[0], kv[1])
	}
	for k, vs := range extra {
		h[k] = vs
	}
	s.w.WriteHeader(http.StatusOK)
}

// send writes one chunk and flushes it.
func (s *streamWriter) send(chunk any) {
	if s.err != nil {
		return
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		s.err = err
		return
	}
	s.write(append(append([]byte("data: "), b...), '\n', '\n'))
}

// done ends the stream.
func (s *streamWriter) done() { s.write([]byte("data: [DONE]\n\n")) }

func (s *streamWriter) write(b []byte) {
	if s.err != nil {
		return
	}
	if _, s.err = s.w.Write(b); s.err == nil {
		// A writer that cannot flush still delivers the answer, whole at
		// its end; no server of this package's is one.
		if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			s.err = err
		}
	}
}
