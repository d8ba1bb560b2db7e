package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/docsapi/docsapi-go/server/engine"
)

// maxLineBytes bounds one line, and one event, of a stream: a delta is a
// few bytes, so a longer line is a fault, refused rather than buffered.
// The whole stream is bounded by maxAnswerBytes.
const maxLineBytes = 1 << 20

// Normalised stop reasons of a ChatStream.
const (
	// StopEnd: the model ended its answer (OpenAI "stop", Anthropic
	// "end_turn" or "stop_sequence").
	StopEnd = "stop"
	// StopLength: the answer was cut at the token limit.
	StopLength = "length"
	// StopContentFilter: the provider's filter stopped the answer, or the
	// model refused.
	StopContentFilter = "content-filter"
	// StopOther: any other reason (a tool call, a paused turn, a reason
	// this package does not know).
	StopOther = "other"
)

// ChatRequest is one streamed answer, without tools.
type ChatRequest struct {
	// Model is the model to ask; "" means Config.Model.
	Model string
	// System is the system prompt; "" sends none. Config.Instructions and
	// the agent's SystemPrompt are not added: they are the editing agent's.
	System string
	// Messages are the conversation, oldest first; the last is usually the
	// user's question.
	Messages []ChatMessage
	// MaxTokens bounds the answer. For Anthropic, 0 means Config.MaxTokens
	// (the Messages API requires a bound). OpenAI-compatible servers get it
	// as max_tokens only when set here, as Config.MaxTokens is not sent to
	// them (see Config.MaxTokens).
	MaxTokens int
}

// ChatMessage is one message of a conversation.
type ChatMessage struct {
	// Role is "user" or "assistant".
	Role string
	// Content is the message's text.
	Content string
}

// ChatUsage is the tokens the provider counted for one answer.
type ChatUsage struct {
	// InputTokens is the prompt's tokens; for Anthropic, tokens read from
	// or written to its prompt cache are included.
	InputTokens int64
	// OutputTokens is the answer's tokens.
	OutputTokens int64
}

// StreamError is an error the provider reported inside a stream it had
// begun with a 200 answer. Such an error is never retried: the reader has
// seen part of the answer.
type StreamError struct {
	// Type is the provider's error type or code, when it sent one.
	Type string
	// Message is the provider's message, cut to a few hundred characters,
	// with the API key redacted.
	Message string
}

func (e *StreamError) Error() string {
	msg := "the model provider reported an error in the stream"
	if e.Type != "" {
		msg += ": " + e.Type
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// errTooLarge ends a stream longer than maxAnswerBytes.
var errTooLarge = fmt.Errorf("the answer is over %d bytes", maxAnswerBytes)

// errClosed is the cause of a stream's end when Close was called first.
var errClosed = errors.New("the stream was closed before its end")

// Chat asks the model for one answer and returns it as a stream of text
// deltas. The model is given no tools.
//
// Until the first byte of a 200 answer has arrived, failures are retried
// as Run's requests are (rate limits, 408 and 5xx answers, network errors,
// with backoff or Retry-After, MaxRetries times); errors that cannot heal
// are engine.Permanent, and an error answer is an *APIError. Once the
// stream has begun nothing is retried. The returned stream must be closed;
// ctx bounds it as a whole.
func (a *Agent) Chat(ctx context.Context, req ChatRequest) (*ChatStream, error) {
	s, err := a.chat(ctx, req)
	return s, a.scrub(err)
}

// The OpenAI-compatible and Anthropic request bodies of Chat. Neither has
// a tools field: a model without tools cannot be talked into using any.
type (
	oaChatRequest struct {
		Model         string          `json:"model"`
		Messages      []oaChatMessage `json:"messages"`
		MaxTokens     int             `json:"max_tokens,omitempty"`
		Stream        bool            `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	oaChatMessage struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	anChatRequest struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		System    string          `json:"system,omitempty"`
		Messages  []oaChatMessage `json:"messages"`
		Stream    bool            `json:"stream"`
	}
)

func (a *Agent) chat(ctx context.Context, req ChatRequest) (*ChatStream, error) {
	model := req.Model
	if model == "" {
		model = a.cfg.Model
	}
	switch {
	case model == "":
		return nil, engine.Permanent(errors.New("llm chat: neither the request nor the configuration names a model"))
	case len(req.Messages) == 0:
		return nil, engine.Permanent(errors.New("llm chat: the request has no message"))
	case req.MaxTokens < 0:
		return nil, engine.Permanent(errors.New("llm chat: MaxTokens is negative"))
	}
	msgs := make([]oaChatMessage, len(req.Messages))
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, engine.Permanent(fmt.Errorf("llm chat: message %d has the role %q, neither user nor assistant", i, m.Role))
		}
		msgs[i] = oaChatMessage(m)
	}
	header := http.Header{}
	var path string
	var body any
	if a.cfg.Provider == OpenAI {
		path = "/chat/completions"
		if a.cfg.APIKey != "" {
			header.Set("Authorization", "Bearer "+a.cfg.APIKey)
		}
		if req.System != "" {
			msgs = append([]oaChatMessage{{Role: "system", Content: req.System}}, msgs...)
		}
		r := oaChatRequest{Model: model, Messages: msgs, MaxTokens: req.MaxTokens, Stream: true}
		r.StreamOptions.IncludeUsage = true
		body = r
	} else {
		path = "/v1/messages"
		if a.cfg.APIKey != "" {
			header.Set("X-Api-Key", a.cfg.APIKey)
		}
		header.Set("Anthropic-Version", a.cfg.AnthropicVersion)
		maxTokens := req.MaxTokens
		if maxTokens == 0 {
			maxTokens = a.cfg.MaxTokens
		}
		body = anChatRequest{Model: model, MaxTokens: maxTokens, System: req.System, Messages: msgs, Stream: true}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("llm chat: encoding the request: %w", err)
	}
	log := a.log.With(slog.String("provider", string(a.cfg.Provider)), slog.String("model", model))
	var s *ChatStream
	err = a.withRetries(ctx, "llm chat", log, func() (int, time.Duration, bool, error) {
		var status int
		var retryAfter time.Duration
		var hasRetryAfter bool
		var err error
		s, status, retryAfter, hasRetryAfter, err = a.open(ctx, path, header, payload)
		return status, retryAfter, hasRetryAfter, err
	})
	if err != nil {
		return nil, err
	}
	s.log = log
	return s, nil
}

// open sends the request once and, on a 200 answer, waits for the first
// byte of its body, so that a connection lost before anything was read is
// retried like any network error. It returns the status (0 when no answer
// arrived, or none of its body) and the Retry-After the provider sent.
//
// No deadline bounds the whole attempt, as an answer may stream for long.
// A timer does instead: it cancels the request when RequestTimeout passes
// without headers or the first byte, and, reset on each line, when it
// passes between two lines of the stream.
func (a *Agent) open(ctx context.Context, path string, header http.Header, payload []byte) (*ChatStream, int, time.Duration, bool, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	idle := a.cfg.RequestTimeout
	silence := fmt.Errorf("the provider sent nothing for %s: %w", idle, context.DeadlineExceeded)
	timer := time.AfterFunc(idle, func() { cancel(silence) })
	fail := func(status int, retryAfter time.Duration, hasRetryAfter bool, err error) (*ChatStream, int, time.Duration, bool, error) {
		timer.Stop()
		if ctx.Err() == nil && errors.Is(context.Cause(sctx), silence) {
			// The transport reports a cancelled context: tell the caller
			// why, as a deadline, which withRetries retries.
			err = silence
		}
		cancel(nil)
		return nil, status, retryAfter, hasRetryAfter, err
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodPost, a.base+path, bytes.NewReader(payload))
	if err != nil {
		return fail(0, 0, false, err)
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := a.streamClient.Do(req)
	if err != nil {
		return fail(0, 0, false, err)
	}
	retryAfter, hasRetryAfter := parseRetryAfter(resp.Header)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		resp.Body.Close()
		apiErr := a.apiError(resp.StatusCode, data)
		apiErr.RetryAfter = retryAfter
		return fail(resp.StatusCode, retryAfter, hasRetryAfter, apiErr)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		resp.Body.Close()
		return fail(resp.StatusCode, 0, false, &decodeError{errors.New("the provider answered with JSON, not an event stream: does the server support streaming?")})
	}
	br := bufio.NewReader(&cappedReader{r: resp.Body, n: maxAnswerBytes})
	if _, err := br.Peek(1); err != nil {
		resp.Body.Close()
		if err == io.EOF {
			err = fmt.Errorf("the answer's body is empty: %w", io.ErrUnexpectedEOF)
		}
		return fail(0, 0, false, err)
	}
	timer.Reset(idle)
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 16<<10), maxLineBytes)
	s := &ChatStream{a: a, provider: a.cfg.Provider, ctx: ctx, sctx: sctx, cancel: cancel, timer: timer, idle: idle,
		body: resp.Body, sc: sc, start: time.Now()}
	return s, resp.StatusCode, 0, false, nil
}

// cappedReader fails once more than n bytes have been read: a stream is
// read line by line, so its total is bounded here.
type cappedReader struct {
	r io.Reader
	n int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	return n, err
}

// ChatStream is one streamed answer. Next, Text, Err, Usage and StopReason
// are for one goroutine; Close may be called from any.
type ChatStream struct {
	a        *Agent
	provider Provider
	log      *slog.Logger
	start    time.Time
	// ctx is the caller's; sctx, a child of it, is the request's, which
	// Close, the end of the stream and the silence timer cancel.
	ctx, sctx context.Context
	cancel    context.CancelCauseFunc
	timer     *time.Timer
	idle      time.Duration
	body      io.Closer
	sc        *bufio.Scanner
	closeOnce sync.Once

	text     string
	deltas   int
	finished bool
	// ended is set when the provider ended the answer properly.
	ended   bool
	err     error
	reason  string // the provider's stop reason, as sent
	refused bool
	usage   ChatUsage
	// blocks holds the type of each Anthropic content block by index, so
	// that only text blocks' deltas are handed over.
	blocks map[int]string
}

// Next reads the stream up to the next text delta, which Text then holds,
// and reports whether there was one. It returns false at the end of the
// answer and on an error: Err tells which.
func (s *ChatStream) Next() bool {
	s.text = ""
	for !s.finished {
		data, err := s.event()
		if err == io.EOF && s.provider == OpenAI && s.reason != "" {
			// Some compatible servers end the body after the finish
			// reason without [DONE]: the answer is complete.
			s.ended = true
			s.finish(nil)
			return false
		}
		if err != nil {
			s.finish(s.readError(err))
			return false
		}
		var text string
		if s.provider == OpenAI {
			text, err = s.openAIEvent(data)
		} else {
			text, err = s.anthropicEvent(data)
		}
		if err != nil {
			s.finish(err)
			return false
		}
		if s.ended {
			s.finish(nil)
		}
		if text != "" {
			s.text = text
			s.deltas++
			return true
		}
	}
	return false
}

// Text is the delta Next read.
func (s *ChatStream) Text() string { return s.text }

// Err is nil while the stream goes on and after the provider ended the
// answer properly; otherwise it says why the answer is incomplete: an
// error the provider reported (*StreamError), a stream that broke off
// (wrapping io.ErrUnexpectedEOF), a silence longer than RequestTimeout
// (wrapping context.DeadlineExceeded), the caller's context, or Close.
func (s *ChatStream) Err() error { return s.err }

// Usage is the tokens the provider reported, once the stream has ended;
// zero when it sent none, as some OpenAI-compatible servers do.
func (s *ChatStream) Usage() ChatUsage { return s.usage }

// StopReason is why the answer ended: StopEnd, StopLength,
// StopContentFilter or StopOther; "" while the provider has sent none. A
// refusal of the model (OpenAI's refusal deltas, Anthropic's "refusal"
// stop reason) is StopContentFilter.
func (s *ChatStream) StopReason() string {
	if s.refused {
		return StopContentFilter
	}
	if s.reason == "" {
		if s.ended {
			return StopOther
		}
		return ""
	}
	if s.provider == OpenAI {
		switch s.reason {
		case "stop":
			return StopEnd
		case "length":
			return StopLength
		case "content_filter":
			return StopContentFilter
		}
		return StopOther
	}
	switch s.reason {
	case "end_turn", "stop_sequence":
		return StopEnd
	case "max_tokens", "model_context_window_exceeded":
		return StopLength
	case "refusal":
		return StopContentFilter
	}
	return StopOther
}

// Refused reports whether the model declined to answer; its explanation,
// if any, was handed over as text.
func (s *ChatStream) Refused() bool { return s.refused || s.reason == "refusal" }

// Close ends the stream and releases its connection. It may be called at
// any time, from any goroutine, and more than once.
func (s *ChatStream) Close() error {
	s.release(errClosed)
	return nil
}

func (s *ChatStream) release(cause error) {
	s.closeOnce.Do(func() {
		s.timer.Stop()
		s.cancel(cause)
		s.body.Close()
	})
}

// finish ends the stream with err (nil for a proper end) and releases it.
func (s *ChatStream) finish(err error) {
	s.finished = true
	s.err = s.a.scrub(err)
	s.release(errClosed)
	attrs := []any{slog.Int("deltas", s.deltas), slog.String("stop", s.StopReason()),
		slog.Int64("input_tokens", s.usage.InputTokens), slog.Int64("output_tokens", s.usage.OutputTokens),
		slog.Duration("duration", time.Since(s.start))}
	if s.err != nil {
		s.log.Warn("llm chat: the stream failed", append(attrs, slog.String("error", s.err.Error()))...)
		return
	}
	s.log.Debug("llm chat: stream done", attrs...)
}

// readError explains an error reading the stream.
func (s *ChatStream) readError(err error) error {
	switch {
	case s.ctx.Err() != nil:
		return fmt.Errorf("llm chat: %w", context.Cause(s.ctx))
	case s.sctx.Err() != nil:
		// Close, or the silence timer.
		return fmt.Errorf("llm chat: %w", context.Cause(s.sctx))
	case err == io.EOF:
		return fmt.Errorf("llm chat: the stream ended before the end of the answer: %w", io.ErrUnexpectedEOF)
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("llm chat: a line of the stream is over %d bytes", maxLineBytes)
	case errors.Is(err, errTooLarge):
		return fmt.Errorf("llm chat: %w", err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("llm chat: the stream broke off: %w", err)
	}
	return fmt.Errorf("llm chat: the stream broke off: %w: %w", io.ErrUnexpectedEOF, err)
}

// event reads the next server-sent event and returns its data, the data
// lines joined by newlines. Event names are not needed: both providers
// repeat the event's type in its data. At the end of the stream it
// returns io.EOF, after the last event even if no blank line ended it.
func (s *ChatStream) event() ([]byte, error) {
	var data []byte
	has := false
	for {
		if !s.sc.Scan() {
			if err := s.sc.Err(); err != nil {
				return nil, err
			}
			if has {
				return data, nil
			}
			return nil, io.EOF
		}
		s.timer.Reset(s.idle)
		line := s.sc.Bytes()
		if len(line) == 0 {
			if has {
				return data, nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // an event name, an id, a retry, a comment
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if len(data)+1+len(value) > maxLineBytes {
			return nil, bufio.ErrTooLong
		}
		if has {
			data = append(data, '\n')
		}
		data = append(data, value...)
		has = true
	}
}

// streamError reads a provider's error object, which both nest under
// "error" as in their error answers.
func (s *ChatStream) streamError(data []byte) error {
	e := s.a.apiError(http.StatusOK, data)
	return fmt.Errorf("llm chat: %w", &StreamError{Type: e.Type, Message: e.Message})
}

func badEvent(err error) error {
	return fmt.Errorf("llm chat: reading the provider's stream: %w", err)
}

// openAIEvent reads one chat.completion.chunk, or the [DONE] that ends the
// stream. The usage comes in a last chunk without choices, when asked for
// with stream_options.include_usage.
func (s *ChatStream) openAIEvent(data []byte) (string, error) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		s.ended = true
		return "", nil
	}
	var chunk struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content *string `json:"content"`
				Refusal *string `json:"refusal"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &chunk); err != nil {
		return "", badEvent(err)
	}
	if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
		return "", s.streamError(data)
	}
	if u := chunk.Usage; u != nil {
		s.usage = ChatUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	}
	var text string
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue // only one answer is asked for
		}
		if c.Delta.Content != nil {
			text += *c.Delta.Content
		}
		if c.Delta.Refusal != nil && *c.Delta.Refusal != "" {
			s.refused = true
			text += *c.Delta.Refusal
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.reason = *c.FinishReason
		}
	}
	return text, nil
}

// anthropicEvent reads one event of the Messages API's stream: the answer
// ends with message_stop, and an error event ends it with an error.
func (s *ChatStream) anthropicEvent(data []byte) (string, error) {
	var ev struct {
		Type    string `json:"type"`
		Index   int    `json:"index"`
		Message struct {
			Usage anUsage `json:"usage"`
		} `json:"message"`
		ContentBlock struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content_block"`
		Delta struct {
			Type       string `json:"type"`
			Text       string `json:"text"`
			StopReason string `json:"stop_reason"`
		} `json:"delta"`
		Usage *anUsage `json:"usage"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return "", badEvent(err)
	}
	switch ev.Type {
	case "message_start":
		s.usage.InputTokens = ev.Message.Usage.input()
		s.usage.OutputTokens = ev.Message.Usage.OutputTokens
	case "content_block_start":
		if s.blocks == nil {
			s.blocks = map[int]string{}
		}
		s.blocks[ev.Index] = ev.ContentBlock.Type
		if ev.ContentBlock.Type == "text" {
			return ev.ContentBlock.Text, nil
		}
	case "content_block_delta":
		// Thinking, signature and tool input deltas are not the answer.
		if typ := s.blocks[ev.Index]; ev.Delta.Type == "text_delta" && (typ == "text" || typ == "") {
			return ev.Delta.Text, nil
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.reason = ev.Delta.StopReason
		}
		if u := ev.Usage; u != nil {
			// The counts are cumulative; the input's is sent again only
			// by recent versions of the API.
			if in := u.input(); in > 0 {
				s.usage.InputTokens = in
			}
			s.usage.OutputTokens = u.OutputTokens
		}
	case "message_stop":
		s.ended = true
	case "error":
		return "", s.streamError(data)
	}
	// ping, content_block_stop and event types added later are ignored, as
	// the API's versioning policy asks.
	return "", nil
}

type anUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func (u anUsage) input() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}
