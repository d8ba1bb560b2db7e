package docsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jarcoal/httpmock"
)

// The stream doubles send the AI SDK v5 UI message stream as the ai
// package writes it (JsonToSseTransformStream: "data: <json>\n\n" per
// chunk, then "data: [DONE]\n\n"; headers text/event-stream and
// x-vercel-ai-ui-message-stream: v1), with the chunk types of its
// ui-message-chunks.ts, and the server-sent events variations its reader
// (eventsource-parser) accepts: CRLF and CR line ends, comments, other
// fields, data split over several lines.

// everyEvent is one of each event type, in an order an answer could have,
// and one type the protocol does not have. The search tool's output is the
// list of results the platform's embedding guide reads sources from.
var everyEvent = []string{
	`{"type":"start","messageId":"msg-1"}`,
	`{"type":"start-step"}`,
	`{"type":"tool-input-start","toolCallId":"call-1","toolName":"search"}`,
	`{"type":"tool-input-delta","toolCallId":"call-1","inputTextDelta":"{\"query\":"}`,
	`{"type":"tool-input-delta","toolCallId":"call-1","inputTextDelta":"\"install\"}"}`,
	`{"type":"tool-input-available","toolCallId":"call-1","toolName":"search","input":{"query":"install"}}`,
	`{"type":"tool-output-available","toolCallId":"call-1","output":[{"path":"quickstart","content":"Install with npm.","metadata":{"title":"Quickstart"}},{"url":"https://acme.dev/cli","content":"The CLI.","metadata":{"title":"CLI","version":"v2"}}]}`,
	`{"type":"finish-step"}`,
	`{"type":"start-step"}`,
	`{"type":"reasoning-start","id":"r1"}`,
	`{"type":"reasoning-delta","id":"r1","delta":"The user wants the CLI."}`,
	`{"type":"reasoning-end","id":"r1"}`,
	`{"type":"text-start","id":"t1"}`,
	`{"type":"text-delta","id":"t1","delta":"Run "}`,
	`{"type":"text-delta","id":"t1","delta":"` + "`npm i mint`" + ` — ünïcödé ✓ 🚀"}`,
	`{"type":"text-end","id":"t1"}`,
	`{"type":"source-url","sourceId":"s1","url":"https://acme.dev/cli","title":"CLI"}`,
	`{"type":"source-document","sourceId":"s2","mediaType":"text/markdown","title":"Guide","filename":"guide.md"}`,
	`{"type":"file","url":"https://acme.dev/a.png","mediaType":"image/png"}`,
	`{"type":"data-usage","id":"u1","data":{"tokens":12}}`,
	`{"type":"message-metadata","messageMetadata":{"model":"m1"}}`,
	`{"type":"tool-input-start","toolCallId":"call-2","toolName":"lookup"}`,
	`{"type":"tool-input-error","toolCallId":"call-2","toolName":"lookup","input":{},"errorText":"bad input"}`,
	`{"type":"tool-output-error","toolCallId":"call-2","errorText":"lookup failed"}`,
	`{"type":"error","errorText":"the model is busy"}`,
	`{"type":"abort"}`,
	`{"type":"citation-v9","id":5,"delta":{"odd":true}}`,
	`{"type":"finish-step"}`,
	`{"type":"finish","finishReason":"stop","threadId":"thr-1"}`,
}

// wantEveryEvent is what Events yields for everyEvent, Raw aside.
var wantEveryEvent = []AssistantEvent{
	{Type: AssistantEventStart, ID: "msg-1"},
	{Type: AssistantEventStartStep},
	{Type: AssistantEventToolInputStart, ToolCallID: "call-1", ToolName: "search"},
	{Type: AssistantEventToolInputDelta, ToolCallID: "call-1", ToolName: "search", Delta: `{"query":`},
	{Type: AssistantEventToolInputDelta, ToolCallID: "call-1", ToolName: "search", Delta: `"install"}`},
	{Type: AssistantEventToolInputAvailable, ToolCallID: "call-1", ToolName: "search"},
	{Type: AssistantEventToolOutputAvailable, ToolCallID: "call-1", ToolName: "search", Sources: wantSources},
	{Type: AssistantEventFinishStep},
	{Type: AssistantEventStartStep},
	{Type: AssistantEventReasoningStart, ID: "r1"},
	{Type: AssistantEventReasoningDelta, ID: "r1", Delta: "The user wants the CLI."},
	{Type: AssistantEventReasoningEnd, ID: "r1"},
	{Type: AssistantEventTextStart, ID: "t1"},
	{Type: AssistantEventTextDelta, ID: "t1", Delta: "Run "},
	{Type: AssistantEventTextDelta, ID: "t1", Delta: "`npm i mint` — ünïcödé ✓ 🚀"},
	{Type: AssistantEventTextEnd, ID: "t1"},
	{Type: AssistantEventSourceURL, ID: "s1", Sources: []AnswerSource{{URL: "https://acme.dev/cli", Title: "CLI"}}},
	{Type: AssistantEventSourceDocument, ID: "s2", Sources: []AnswerSource{{Title: "Guide"}}},
	{Type: AssistantEventFile},
	{Type: "data-usage", ID: "u1"},
	{Type: AssistantEventMessageMetadata},
	{Type: AssistantEventToolInputStart, ToolCallID: "call-2", ToolName: "lookup"},
	{Type: AssistantEventToolInputError, ToolCallID: "call-2", ToolName: "lookup", ErrorText: "bad input"},
	{Type: AssistantEventToolOutputError, ToolCallID: "call-2", ToolName: "lookup", ErrorText: "lookup failed"},
	{Type: AssistantEventError, ErrorText: "the model is busy"},
	{Type: AssistantEventAbort},
	{Type: "citation-v9"},
	{Type: AssistantEventFinishStep},
	{Type: AssistantEventFinish, FinishReason: "stop", ThreadID: "thr-1"},
}

var wantSources = []AnswerSource{
	{Path: "quickstart", Title: "Quickstart", Content: "Install with npm.", Metadata: map[string]any{"title": "Quickstart"}},
	{URL: "https://acme.dev/cli", Title: "CLI", Content: "The CLI.", Metadata: map[string]any{"title": "CLI", "version": "v2"}},
}

// sse writes events as the ai package does, then [DONE].
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// sseVaried writes events with every variation of the format a reader
// must accept, in turn: CRLF and CR line ends, a comment, other fields, no
// space after the colon, data split over two lines, a byte order mark.
func sseVaried(events ...string) string {
	var b strings.Builder
	b.WriteString("\uFEFF: the stream begins\n\n")
	for i, e := range events {
		switch i % 7 {
		case 0:
			b.WriteString("data: " + e + "\r\n\r\n")
		case 1:
			b.WriteString("data: " + e + "\r\r")
		case 2:
			b.WriteString(": ping\nevent: message\nid: " + fmt.Sprint(i) + "\nretry: 1000\ndata: " + e + "\n\n")
		case 3:
			b.WriteString("data:" + e + "\n\n")
		case 4:
			// JSON allows a line feed between tokens: split after the first comma.
			first, rest, _ := strings.Cut(e, ",")
			if rest == "" {
				b.WriteString("data: " + e + "\n\n")
			} else {
				b.WriteString("data: " + first + ",\ndata: " + rest + "\n\n")
			}
		case 5:
			// The same with CRLF: a CR split from its LF must not end the event.
			first, rest, _ := strings.Cut(e, ",")
			if rest == "" {
				b.WriteString("data: " + e + "\r\n\r\n")
			} else {
				b.WriteString("data: " + first + ",\r\ndata: " + rest + "\r\n\r\n")
			}
		default:
			b.WriteString("data: " + e + "\n\n\n") // an extra empty line dispatches nothing
		}
	}
	b.WriteString("data: [DONE]\r\n\r\n")
	return b.String()
}

// pieces reads data in pieces of the given sizes in turn, so that lines,
// line ends (CR from LF), fields and UTF-8 sequences are split across reads.
type pieces struct {
	data  []byte
	sizes []int
	n     int
	err   error // returned once data is read; nil means io.EOF
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		if p.err != nil {
			return 0, p.err
		}
		return 0, io.EOF
	}
	size := min(p.sizes[p.n%len(p.sizes)], len(b), len(p.data))
	p.n++
	copy(b, p.data[:size])
	p.data = p.data[size:]
	return size, nil
}

// streamBody is a response body that records whether it was closed.
type streamBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *streamBody) Close() error { b.closed.Store(true); return nil }

// replyStream answers 200 with a stream read from body(); header adds
// (name, value) pairs.
func replyStream(body func() io.Reader, header ...string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		h := http.Header{"Content-Type": {"text/event-stream"}, "X-Vercel-Ai-Ui-Message-Stream": {"v1"}}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{StatusCode: 200, Header: h, ContentLength: -1, Body: &streamBody{Reader: body()}, Request: req}, nil
	}
}

func replyStreamString(s string, header ...string) httpmock.Responder {
	return replyStream(func() io.Reader { return strings.NewReader(s) }, header...)
}

var askHello = AskParams{Messages: []AskMessage{{Text: "How do I install the CLI?"}}}

// readEvents ranges over the stream to its end and returns the events and
// the errors, failing the test if an event follows an error.
func readEvents(t *testing.T, s *AnswerStream) ([]AssistantEvent, []error) {
	t.Helper()
	var evs []AssistantEvent
	var errs []error
	for ev, err := range s.Events() {
		if err != nil {
			if ev.Type != "" || ev.Raw != nil {
				t.Errorf("error %v came with event %+v", err, ev)
			}
			errs = append(errs, err)
			continue
		}
		if len(errs) > 0 {
			t.Errorf("event %+v after error %v", ev, errs[0])
		}
		evs = append(evs, ev)
		if len(evs) > rangeBound {
			t.Fatal("the stream does not end")
		}
	}
	return evs, errs
}

var ignoreRaw = cmpopts.IgnoreFields(AssistantEvent{}, "Raw")

func TestAnswerStreamEveryEventSplitAnywhere(t *testing.T) {
	streams := map[string]string{"as the ai package writes it": sse(everyEvent...), "varied": sseVaried(everyEvent...)}
	splits := [][]int{{1}, {2}, {3}, {7}, {1, 2, 3, 5, 8, 13}, {4096}, {1 << 20}}
	for name, stream := range streams {
		for _, sizes := range splits {
			t.Run(fmt.Sprint(name, sizes), func(t *testing.T) {
				c, mt := newAssistantClient(t)
				mt.RegisterNoResponder(replyStream(func() io.Reader { return &pieces{data: []byte(stream), sizes: sizes} }))
				s, err := c.Assistant.Ask(context.Background(), "acme", askHello)
				if err != nil {
					t.Fatal(err)
				}
				evs, errs := readEvents(t, s)
				if len(errs) > 0 {
					t.Fatalf("errors: %v", errs)
				}
				if diff := cmp.Diff(wantEveryEvent, evs, ignoreRaw); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				for i, ev := range evs {
					if i < len(everyEvent) && string(ev.Raw) != everyEvent[i] && name != "varied" {
						t.Errorf("event %d: Raw = %s, want %s", i, ev.Raw, everyEvent[i])
					}
					if i < len(everyEvent) && !json.Valid(ev.Raw) {
						t.Errorf("event %d: Raw is not JSON: %s", i, ev.Raw)
					}
				}
				if got := s.ThreadID(); got != "thr-1" {
					t.Errorf("ThreadID = %q, want the finish event's", got)
				}
			})
		}
	}
}

func TestAssistantEventTypeKnown(t *testing.T) {
	for _, want := range wantEveryEvent {
		if got, should := want.Type.Known(), want.Type != "citation-v9"; got != should {
			t.Errorf("%q.Known() = %v", want.Type, got)
		}
	}
	if !AssistantEventType("data-x").IsData() || AssistantEventType("database").IsData() {
		t.Error("IsData is wrong")
	}
}

// Every cut of the stream before its finish event has been read whole is
// an error wrapping io.ErrUnexpectedEOF, never a short answer; every cut
// after it is the whole answer.
func TestAnswerStreamCutAnywhere(t *testing.T) {
	events := []string{
		`{"type":"start"}`, `{"type":"text-start","id":"t"}`, `{"type":"text-delta","id":"t","delta":"Hello"}`,
		`{"type":"text-end","id":"t"}`, `{"type":"finish"}`,
	}
	full := sse(events...)
	finishEnd := strings.Index(full, `{"type":"finish"}`) + len(`{"type":"finish"}`+"\n\n")
	c, mt := newAssistantClient(t)
	for n := 0; n <= len(full); n++ {
		mt.RegisterNoResponder(replyStreamString(full[:n]))
		s, err := c.Assistant.Ask(context.Background(), "acme", askHello)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := s.Answer()
		switch {
		case n < finishEnd && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("cut at %d of %d: Answer = %q, %v; want io.ErrUnexpectedEOF", n, len(full), ans.Text, err)
		case n >= finishEnd && (err != nil || ans.Text != "Hello"):
			t.Errorf("cut at %d, after the finish: Answer = %q, %v; want the whole answer", n, ans.Text, err)
		}
	}
}

func TestAnswerStreamBrokenOff(t *testing.T) {
	errReset := errors.New("connection reset by peer (test)")
	c, mt := newAssistantClient(t)
	start := sse(`{"type":"text-start","id":"t"}`, `{"type":"text-delta","id":"t","delta":"Hel"}`)
	start = strings.TrimSuffix(start, "data: [DONE]\n\n")
	mt.RegisterNoResponder(replyStream(func() io.Reader {
		return &pieces{data: []byte(start), sizes: []int{5}, err: errReset}
	}))
	s, err := c.Assistant.Ask(context.Background(), "acme", askHello)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := s.Answer()
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, errReset) {
		t.Errorf("Answer = %v; want io.ErrUnexpectedEOF and the read error", err)
	}
	if ans == nil || ans.Text != "Hel" {
		t.Errorf("Answer kept %+v; want what came before the break", ans)
	}

	// [DONE] without a finish event is a cut too, and an error event
	// before it is named.
	mt.RegisterNoResponder(replyStreamString(sse(`{"type":"error","errorText":"overloaded"}`)))
	s, err = c.Assistant.Ask(context.Background(), "acme", askHello)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Answer()
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("Answer of [DONE] without finish = %v; want io.ErrUnexpectedEOF naming the error event", err)
	}

	// A JSON body where the stream should be is named by its type.
	mt.RegisterNoResponder(replyJSON(200, `{"answer":"no stream"}`))
	s, err = c.Assistant.Ask(context.Background(), "acme", askHello)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Answer()
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), `Content-Type "application/json"`) {
		t.Errorf("Answer of a JSON body = %v", err)
	}
}

func TestAnswerStreamBounds(t *testing.T) {
	c, mt := newAssistantClient(t)
	ask := func(stream string) ([]AssistantEvent, []error) {
		t.Helper()
		mt.RegisterNoResponder(replyStreamString(stream))
		s, err := c.Assistant.Ask(context.Background(), "acme", askHello)
		if err != nil {
			t.Fatal(err)
		}
		return readEvents(t, s)
	}
	// An event just under the bound is read whole.
	big := strings.Repeat("x", maxStreamLine-100)
	evs, errs := ask(sse(`{"type":"text-delta","id":"t","delta":"`+big+`"}`, `{"type":"finish"}`))
	if len(errs) > 0 || len(evs) != 2 || evs[0].Delta != big {
		t.Errorf("an event of %d bytes: %d events, errors %v", len(big), len(evs), errs)
	}
	// A longer line is an error, even before a line end comes.
	for name, stream := range map[string]string{
		"a long comment":       ": " + strings.Repeat("x", 2*maxStreamLine) + "\n\n" + sse(`{"type":"finish"}`),
		"a long line":          "data: " + strings.Repeat("x", maxStreamLine+1) + "\n\n",
		"a line with no end":   "data: " + strings.Repeat("x", 3*maxStreamLine),
		"long data over lines": strings.Repeat("data: "+strings.Repeat("x", maxStreamLine/4)+"\n", 5) + "\n",
	} {
		evs, errs = ask(stream)
		if len(evs) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "1048576 bytes") {
			t.Errorf("%s: %d events, errors %v; want one error naming the bound", name, len(evs), errs)
		}
	}
}

func TestAnswerStreamProtocolErrors(t *testing.T) {
	c, mt := newAssistantClient(t)
	for event, want := range map[string]string{
		`not json`:                           "not a JSON object with a type",
		`{"delta":"x"}`:                      "not a JSON object with a type",
		`["text-delta"]`:                     "not a JSON object with a type",
		`{"type":"text-delta","delta":5}`:    `"delta": expected a string, got JSON number`,
		`{"type":"finish","finishReason":1}`: `"finishReason"`,
	} {
		mt.RegisterNoResponder(replyStreamString(sse(`{"type":"start"}`, event, `{"type":"finish"}`)))
		s, err := c.Assistant.Ask(context.Background(), "acme", askHello)
		if err != nil {
			t.Fatal(err)
		}
		evs, errs := readEvents(t, s)
		if len(evs) != 1 || len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s: events %v, errors %v; want the start, then an error saying %s", event, evs, errs, want)
		}
	}
}

func TestAnswerStreamReadOnce(t *testing.T) {
	c, mt := newAssistantClient(t)
	mt.RegisterNoResponder(replyStreamString(sse(`{"type":"finish"}`)))
	s, err := c.Assistant.Ask(context.Background(), "acme", askHello)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := readEvents(t, s); len(errs) != 0 {
		t.Fatal(errs)
	}
	if _, err := s.Answer(); err == nil || !strings.Contains(err.Error(), "read once") {
		t.Errorf("a second read = %v, want an error", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after the end = %v", err)
	}
}

// Answer collects the text blocks, the search tool's sources, the thread
// from the headers; the key leaves the headers WithResponse shows.
func TestAnswerCollectsTheWholeAnswer(t *testing.T) {
	c, mt := newAssistantClient(t)
	events := []string{
		`{"type":"start","messageId":"m"}`,
		`{"type":"tool-input-available","toolCallId":"call-1","toolName":"search","input":{"query":"cli"}}`,
		everyEvent[6], // the search tool's output
		`{"type":"tool-input-available","toolCallId":"c2","toolName":"other","input":{}}`,
		`{"type":"tool-output-available","toolCallId":"c2","output":[{"url":"https://not-a-source.test"}]}`,
		`{"type":"text-start","id":"a"}`, `{"type":"text-delta","id":"a","delta":"First"}`, `{"type":"text-end","id":"a"}`,
		`{"type":"text-start","id":"b"}`, `{"type":"text-delta","id":"b","delta":"second."}`, `{"type":"text-end","id":"b"}`,
		`{"type":"finish","finishReason":"stop"}`,
	}
	body := bytes.NewBufferString(sse(events...))
	bodyRead := replyStream(func() io.Reader { return body }, "X-Thread-Id", "thr-9", "X-Thread-Key", "tk-SECRET")
	var closed *streamBody
	var reqCtx context.Context
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		resp, err := bodyRead(req)
		closed, reqCtx = resp.Body.(*streamBody), req.Context()
		return resp, err
	})
	var resp Response
	ans, err := c.Assistant.Answer(context.Background(), "acme", askHello, WithResponse(&resp))
	if err != nil {
		t.Fatal(err)
	}
	want := &AssistantAnswer{Text: "First\n\nsecond.", Sources: wantSources, ThreadID: "thr-9", ThreadKey: NewThreadKey("tk-SECRET"), FinishReason: "stop"}
	if diff := cmp.Diff(want, ans); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if resp.Header.Get("X-Thread-Key") != "" || resp.Header.Get("X-Thread-Id") != "thr-9" {
		t.Errorf("WithResponse's header: X-Thread-Key %t, X-Thread-Id %q; want the key gone, the ID kept",
			resp.Header.Get("X-Thread-Key") != "", resp.Header.Get("X-Thread-Id"))
	}
	if !closed.closed.Load() {
		t.Error("the body was not closed")
	}
	if reqCtx.Err() == nil {
		t.Error("the request's own context was not released")
	}

	// Error events make Answer's error, after the whole answer.
	mt.RegisterNoResponder(replyStreamString(sse(`{"type":"error","errorText":"no index"}`, `{"type":"finish"}`), "X-Thread-Id", "thr-10"))
	ans, err = c.Assistant.Answer(context.Background(), "acme", askHello)
	var ansErr *AnswerError
	if !errors.As(err, &ansErr) || !slicesEqual(ansErr.Messages, []string{"no index"}) || ans.ThreadID != "thr-10" {
		t.Errorf("Answer with an error event = %+v, %v", ans, err)
	}
	if got, want := err.Error(), "docsapi: POST "+askPathAcme+": the assistant reported an error: no index"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}

	// The thread ID of the finish event, without headers, also as its
	// message metadata.
	for _, finish := range []string{`{"type":"finish","threadId":"thr-11"}`, `{"type":"finish","messageMetadata":{"threadId":"thr-11"}}`} {
		mt.RegisterNoResponder(replyStreamString(sse(finish)))
		ans, err = c.Assistant.Answer(context.Background(), "acme", askHello)
		if err != nil || ans.ThreadID != "thr-11" || !ans.ThreadKey.IsZero() {
			t.Errorf("%s: Answer = %+v, %v; want thread thr-11, no key", finish, ans, err)
		}
	}
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }

// Once the 200 arrived, nothing is sent again, however the stream ends;
// before it, the pipeline's rules for a write apply: 429 and refused
// connections are retried, a 5xx or a reset is not.
func TestAskRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := newAssistantClient(t)
		ok := replyStreamString(sse(`{"type":"text-delta","id":"t","delta":"Hi"}`, `{"type":"finish"}`))
		cut := replyStreamString("data: " + `{"type":"text-delta","id":"t","delta":"Hi"}` + "\n\n")
		tests := []struct {
			name    string
			replies []httpmock.Responder
			sent    int
			wantErr func(error) bool
		}{
			{"429 then the answer", []httpmock.Responder{replyJSON(429, `{"message":"slow down"}`), ok}, 2, nil},
			{"refused then the answer", []httpmock.Responder{replyError(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), ok}, 2, nil},
			{"500", []httpmock.Responder{replyJSON(500, `{"message":"down"}`), ok}, 1, func(err error) bool { return errors.Is(err, ErrServer) }},
			{"reset", []httpmock.Responder{replyError(errConnReset), ok}, 1, func(err error) bool { return errors.Is(err, errConnReset) }},
			{"cut after the 200", []httpmock.Responder{cut, ok}, 1, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		}
		for _, tt := range tests {
			rec := serve(t, mt, on(http.MethodPost, askPathAcme, tt.replies...))
			ans, err := c.Assistant.Answer(context.Background(), "acme", askHello)
			switch {
			case tt.wantErr == nil && (err != nil || ans.Text != "Hi"):
				t.Errorf("%s: Answer = %+v, %v", tt.name, ans, err)
			case tt.wantErr != nil && !tt.wantErr(err):
				t.Errorf("%s: Answer error = %v", tt.name, err)
			}
			if n := len(rec.Requests()); n != tt.sent {
				t.Errorf("%s: %d requests, want %d", tt.name, n, tt.sent)
			}
		}
	})
}

// waitClosed waits, boundedly, for the double to see the client's
// connection go.
func waitClosed(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(20 * time.Second):
		t.Fatal("the double's connection is still open")
	}
}

// blockingDouble writes events, then holds the stream open until the
// client goes, which it reports on the returned channel.
func blockingDouble(t *testing.T, events ...string) (*httptest.Server, <-chan struct{}) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once it read the request
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Thread-Id", "thr-1")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, gone
}

func newServedAssistantClient(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(testAssistantKey, append([]Option{WithBaseURL(url)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAnswerStreamBreakClosesTheConnection(t *testing.T) {
	srv, gone := blockingDouble(t, `{"type":"start"}`, `{"type":"text-delta","id":"t","delta":"a"}`)
	c := newServedAssistantClient(t, srv.URL)
	s, err := c.Assistant.Ask(context.Background(), "acme", askHello)
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range s.Events() {
		if err != nil || ev.Type != AssistantEventStart {
			t.Fatalf("first event %+v, %v", ev, err)
		}
		break
	}
	waitClosed(t, gone)
}

func TestAnswerStreamCancelClosesTheConnection(t *testing.T) {
	srv, gone := blockingDouble(t, `{"type":"start"}`)
	c := newServedAssistantClient(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.Assistant.Ask(ctx, "acme", askHello)
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for ev, err := range s.Events() {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ev.Type == AssistantEventStart {
			cancel() // the next read is blocked on the double, which sends nothing more
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) || errors.Is(errs[0], io.ErrUnexpectedEOF) {
		t.Errorf("errors %v; want one, context.Canceled", errs)
	}
	waitClosed(t, gone)

	// Close from another goroutine stops a blocked reader too.
	srv2, gone2 := blockingDouble(t, `{"type":"start"}`)
	c2 := newServedAssistantClient(t, srv2.URL)
	s, err = c2.Assistant.Ask(context.Background(), "acme", askHello)
	if err != nil {
		t.Fatal(err)
	}
	errs = nil
	for ev, err := range s.Events() {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ev.Type == AssistantEventStart {
			go s.Close()
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "closed") {
		t.Errorf("errors %v; want one saying the stream was closed", errs)
	}
	waitClosed(t, gone2)
}

// The client's Timeout bounds the wait for the headers, not the answer: a
// stream that lasts longer than it comes whole.
func TestAnswerStreamOutlivesTheClientTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for i := range 5 {
			// The pauses add up to four timeouts: an answer cut by the
			// Timeout could not arrive whole.
			time.Sleep(timeout)
			fmt.Fprintf(w, "data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"%d\"}\n\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, sse(`{"type":"finish"}`))
	}))
	defer srv.Close()
	c := newServedAssistantClient(t, srv.URL, WithHTTPClient(&http.Client{Timeout: timeout}))
	ans, err := c.Assistant.Answer(context.Background(), "acme", askHello)
	if err != nil || ans.Text != "01234" {
		t.Fatalf("Answer = %+v, %v; want the whole answer", ans, err)
	}

	// Headers that do not come within the Timeout end the call, as a
	// timeout (not retried: the question may have been taken).
	var calls atomic.Int32
	gone := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once it read the request
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(time.Minute):
		}
	}))
	defer slow.Close()
	c = newServedAssistantClient(t, slow.URL, WithHTTPClient(&http.Client{Timeout: timeout}))
	_, err = c.Assistant.Ask(context.Background(), "acme", askHello)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no response headers within the client's timeout of 50ms") {
		t.Errorf("Ask = %v; want a header timeout", err)
	}
	waitClosed(t, gone)
	if n := calls.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
