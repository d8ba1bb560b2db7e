// Package assistant is the hosted Assistant API's answer endpoint, POST
// /discovery/v2/assistant/{domain}/message: a reader's question answered
// by the project's model from the project's documentation index, streamed
// as an AI SDK UI message stream (what the ai package's useChat reads),
// and every exchange recorded in its thread for the assistant exports.
//
// What a request goes through, after the assistant-key gate (package
// assistantauth) admitted it:
//
//  1. this endpoint's own budget per client address, tighter than the
//     search's: an answer costs a model call;
//  2. the body, within its bounds, in the hosted shape; the question is
//     the last user message's text;
//  3. the project's model (503 without one);
//  4. for a follow-up, the thread, by its ID and key (404 for a missing,
//     wrong or unknown one, alike), and its cap of exchanges; the history
//     the model reads is the thread's record, never the messages a client
//     sends, which it could forge;
//  5. the project's daily cap of exchanges and daily token budget (429
//     with Retry-After until the next UTC midnight);
//  6. retrieval (retrieve.go). With no relevant section the model is not
//     asked: a fixed reply says the docs do not cover the question, and
//     the exchange is recorded unanswered.
//
// Safe by construction: the model gets no tools, the excerpts and the
// reader's words reach it in delimited blocks that their text cannot close
// (prompt.go), and every size that reaches it is bounded.
package assistant

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/agent/llm"
	"github.com/docsapi/docsapi-go/server/internal/assistantauth"
	"github.com/docsapi/docsapi-go/server/internal/base62"
	"github.com/docsapi/docsapi-go/server/internal/input"
	"github.com/docsapi/docsapi-go/server/internal/public"
	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/internal/searchresult"
	"github.com/docsapi/docsapi-go/server/internal/ulid"
	"github.com/docsapi/docsapi-go/server/store"
)

// Model is a chat model that streams its answer: an *llm.Agent, for either
// provider.
type Model interface {
	Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatStream, error)
}

// ProjectModel is a project's assistant model and its bounds.
type ProjectModel struct {
	// Chat streams answers; nil: the project has no assistant.
	Chat Model
	// Model is the model's name as the provider knows it; "" leaves it
	// to Chat's own default.
	Model string
	// MaxTokens bounds one answer, in tokens; 0: Limits.MaxAnswerTokens.
	MaxTokens int
	// DailyTokens is the project's budget of tokens per UTC day, the
	// prompts' and the answers' together; 0: Limits.DailyTokens.
	DailyTokens int64
}

// Defaults of Limits.
const (
	DefaultMaxBodyBytes     = 256 << 10 // a long thread's history, which clients send back whole
	DefaultMaxQuestionChars = 2000
	DefaultMaxContextItems  = 5
	DefaultMaxContextChars  = 4000
	DefaultThreadCap        = 20
	DefaultDailyCap         = 1000
	DefaultDailyTokens      = 2_000_000
	DefaultMaxAnswerTokens  = 1024
)

// minScore drops the hits of the all-words search below this fraction of
// the best one's relevance.
const minScore = 0.1

// DefaultPerAddress returns the budget of one client address on this
// endpoint: a reader asks a question every few seconds at most.
func DefaultPerAddress() ratelimit.Limit { return ratelimit.Limit{Requests: 10, Per: time.Minute} }

// Limits bound what a request may cost. Every field must be set: package
// server resolves them from its AssistantConfig, the one place of their
// defaults.
type Limits struct {
	// PerAddress is this endpoint's budget per client address, on top of
	// the gate's; MaxAddresses bounds the addresses remembered.
	PerAddress   ratelimit.Limit
	MaxAddresses int
	// MaxBodyBytes bounds the request's body (413 past it).
	MaxBodyBytes int64
	// MaxQuestionChars bounds the question, in characters.
	MaxQuestionChars int
	// MaxContextItems and MaxContextChars bound the context: its items,
	// and each item's value in characters.
	MaxContextItems int
	MaxContextChars int
	// ThreadCap is the most exchanges a thread holds; DailyCap the most a
	// project records in a UTC day.
	ThreadCap int
	DailyCap  int
	// DailyTokens is a project's default budget of tokens per UTC day.
	DailyTokens int64
	// MaxAnswerTokens is the default bound of one answer, in tokens.
	MaxAnswerTokens int
}

// Store is what the endpoint reads and writes: the index and the
// conversations.
type Store interface {
	SearchDocs(ctx context.Context, q store.DocsQuery) ([]store.DocHit, error)
	DocPage(ctx context.Context, projectID, path string) (store.DocPage, error)
	store.ConversationStore
}

// Error is the type of this package's sentinel errors: constants, so that
// no code can reassign them.
type Error string

// Error returns the text of the error.
func (e Error) Error() string { return string(e) }

// ErrNoModel is what Config.Models returns for a project without an
// assistant model.
const ErrNoModel Error = "the project has no assistant model"

// Config configures a Handler.
type Config struct {
	Store  Store
	Logger *slog.Logger
	Now    func() time.Time
	// Addr is the client's address, as the budgets count it.
	Addr func(*http.Request) netip.Addr
	// Models returns a project's model; ErrNoModel, or a nil Chat, when it
	// has none (503). Nil: no project has one.
	Models func(store.Project) (ProjectModel, error)
	Limits Limits
}

// Handler answers the endpoint. It is safe for concurrent use.
type Handler struct {
	cfg        Config
	perAddress *ratelimit.PerAddress
}

// New returns the Handler of cfg, whose Limits are complete.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg}
	if !cfg.Limits.PerAddress.Off() {
		h.perAddress = ratelimit.NewPerAddress(cfg.Limits.PerAddress, max(cfg.Limits.MaxAddresses, 1))
	}
	return h
}

// NoSourceReply is the answer to a question retrieval found no relevant
// section for: the model is not asked, so it cannot invent one.
const NoSourceReply = "The documentation does not cover this question, so I cannot answer it from the docs. Try asking it another way, or search the documentation."

// notFoundThread is the one answer to a follow-up whose thread is missing,
// unknown or not its key's: the three alike, so that an ID alone tells
// nothing.
const notFoundThread = "no such thread: a follow-up sends the threadId and the threadKey of the thread's first answer"

// threadKeyLength is the base62 characters of a thread key: about 256
// bits, so that its SHA-256 alone may be stored, as for API keys.
const threadKeyLength = 43

// SearchTool is the name of the tool call that carries the retrieval in
// the stream, as the hosted assistant names it; clients read their
// sources from its output.
const SearchTool = "search"

// maxAnswerBytes bounds an answer whatever the model sends: a model that
// ignores its token bound is cut here.
const maxAnswerBytes = 256 << 10

// maxAnswerTime bounds one answer, the model's stream included: long
// enough for a slow model's long answer, short enough that a stalled one
// does not hold a connection and a reader waiting.
const maxAnswerTime = 5 * time.Minute

// recordTimeout bounds the writes after an answer, which outlive a client
// that left.
const recordTimeout = 10 * time.Second

// Message answers POST /discovery/v2/assistant/{domain}/message for an
// admitted request, and returns what came of it (a constant of package
// public).
func (h *Handler) Message(w http.ResponseWriter, r *http.Request, adm assistantauth.Admission) string {
	ctx := r.Context()
	now := h.cfg.Now()
	if h.perAddress != nil {
		if wait, limited := h.perAddress.Take(h.cfg.Addr(r), now); limited {
			w.Header().Set("Retry-After", ratelimit.RetryAfter(wait))
			assistantauth.WriteMessage(w, http.StatusTooManyRequests, "too many questions from this address; retry later")
			return public.RateLimited
		}
	}
	a, outcome := h.read(w, r)
	if outcome != "" {
		return outcome
	}
	project := adm.Project
	pm, err := h.model(project)
	if err != nil {
		if errors.Is(err, ErrNoModel) {
			assistantauth.WriteMessage(w, http.StatusServiceUnavailable, "site "+respond.Quote(project.Domain)+" has no assistant model: its operator has not configured one")
			return public.Unavailable
		}
		assistantauth.WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, h.cfg.Logger, "loading the assistant model", err))
		return public.Error
	}

	var history []store.Exchange
	if a.followUp {
		var outcome string
		if history, outcome = h.thread(w, r, project.ID, a); outcome != "" {
			return outcome
		}
	}
	if outcome := h.budgets(w, r, project.ID, pm, now); outcome != "" {
		return outcome
	}

	hits, err := h.retrieve(ctx, project.ID, a)
	var exs []excerpt
	if err == nil && len(hits) > 0 {
		exs, err = h.excerpts(ctx, project.ID, hits)
	}
	if err != nil {
		status, msg := respond.StoreAnswer(r, h.cfg.Logger, err, "site "+respond.Quote(project.Domain), "searching the documentation")
		assistantauth.WriteMessage(w, status, msg)
		if status < 500 {
			return public.BadBody
		}
		return public.Error
	}

	askedAt := now.UTC().Truncate(time.Microsecond)
	ex := store.Exchange{
		ID: ulid.New(askedAt), QuestionID: ulid.New(askedAt), ProjectID: project.ID,
		Question: a.question, AskedAt: askedAt, ResponseType: store.ResponseAnswer,
		PageURL: a.currentPath, Caller: CallerOf(r), ThreadCap: h.cfg.Limits.ThreadCap, DailyCap: h.cfg.Limits.DailyCap,
	}
	extra := http.Header{}
	extra.Set("Access-Control-Expose-Headers", "X-Thread-Id, X-Thread-Key")
	var thread *store.Thread
	if a.followUp {
		ex.ThreadID = a.threadID
	} else {
		key := base62.Random(threadKeyLength)
		hash := sha256.Sum256([]byte(key))
		thread = &store.Thread{ID: ulid.New(askedAt), ProjectID: project.ID, KeyHash: hash[:], Fp: a.fp, Caller: ex.Caller, CreatedAt: askedAt}
		ex.ThreadID = thread.ID
		extra.Set("X-Thread-Id", thread.ID)
		extra.Set("X-Thread-Key", key)
	}

	sw := newStreamWriter(w)
	// The write deadline leaves the answer's bound a margin to write its
	// end, when the model's stream was cut by it.
	sw.open(extra, maxAnswerTime+recordTimeout)
	sw.send(startChunk{Type: "start", MessageID: ex.ID})
	sw.send(typeChunk{Type: "start-step"})
	callID := "call_" + base62.Random(16)
	sw.send(toolInputStartChunk{Type: "tool-input-start", ToolCallID: callID, ToolName: SearchTool})
	sw.send(toolInputAvailableChunk{Type: "tool-input-available", ToolCallID: callID, ToolName: SearchTool, Input: struct {
		Query string `json:"query"`
	}{a.question}})
	results := make([]searchresult.Result, len(hits))
	for i, hit := range hits {
		results[i] = searchresult.Of(hit)
		ex.Sources = appendSource(ex.Sources, hit)
	}
	sw.send(toolOutputAvailableChunk{Type: "tool-output-available", ToolCallID: callID, Output: results})
	sw.send(typeChunk{Type: "finish-step"})
	sw.send(typeChunk{Type: "start-step"})
	textID := "text_" + base62.Random(16)
	sw.send(textChunk{Type: "text-start", ID: textID})

	var reason string
	var tokens int64
	if len(hits) == 0 {
		ex.Resolution = store.Unanswered
		ex.Answer = NoSourceReply
		sw.send(textDeltaChunk{Type: "text-delta", ID: textID, Delta: NoSourceReply})
		sw.send(textChunk{Type: "text-end", ID: textID})
		reason = finishStop
	} else {
		ex.Resolution = store.Answered
		req := llm.ChatRequest{Model: pm.Model, System: SystemPrompt, Messages: messages(history, userMessage(a, exs)), MaxTokens: pm.MaxTokens}
		ex.Answer, reason, tokens = h.answer(r, sw, pm.Chat, req, textID)
	}
	// Recorded before the finish: a client may follow up as soon as it
	// reads it, and the thread must then exist.
	ex.AnsweredAt = h.cfg.Now().UTC().Truncate(time.Microsecond)
	if ex.AnsweredAt.Before(ex.AskedAt) {
		ex.AnsweredAt = ex.AskedAt
	}
	h.record(r, ex, thread, tokens)
	sw.send(typeChunk{Type: "finish-step"})
	sw.send(finishChunk{Type: "finish", FinishReason: reason, MessageMetadata: finishMetadata{ThreadID: ex.ThreadID}})
	sw.done()
	if ex.Resolution == store.Unanswered {
		return public.Unanswered
	}
	return public.Accepted
}

// read reads and checks the body; it answers a refused one and returns
// its outcome.
func (h *Handler) read(w http.ResponseWriter, r *http.Request) (ask, string) {
	max := h.cfg.Limits.MaxBodyBytes
	if r.ContentLength > max {
		assistantauth.WriteMessage(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes (the cap on a request's body)", max))
		return ask{}, public.TooLarge
	}
	raw, bad := input.ReadBody(w, r, max)
	var b body
	if bad == nil {
		bad = input.DecodeJSON(raw, &b, bodyOptions)
	}
	if bad != nil {
		if bad.Status == http.StatusRequestEntityTooLarge {
			assistantauth.WriteMessage(w, bad.Status, bad.Message+" (the cap on a request's body)")
			return ask{}, public.TooLarge
		}
		assistantauth.WriteMessage(w, bad.Status, bad.Message)
		return ask{}, public.BadBody
	}
	a, bad := parse(b, h.cfg.Limits)
	if bad != nil {
		assistantauth.WriteMessage(w, bad.Status, bad.Message)
		return ask{}, public.BadBody
	}
	return a, ""
}

// model returns the project's model with its bounds resolved.
func (h *Handler) model(p store.Project) (ProjectModel, error) {
	if h.cfg.Models == nil {
		return ProjectModel{}, ErrNoModel
	}
	pm, err := h.cfg.Models(p)
	if err != nil {
		return ProjectModel{}, err
	}
	if pm.Chat == nil {
		return ProjectModel{}, ErrNoModel
	}
	if pm.MaxTokens <= 0 {
		pm.MaxTokens = h.cfg.Limits.MaxAnswerTokens
	}
	if pm.DailyTokens <= 0 {
		pm.DailyTokens = h.cfg.Limits.DailyTokens
	}
	return pm, nil
}

// thread checks a follow-up's thread and returns its exchanges; it
// answers a refused one and returns its outcome.
func (h *Handler) thread(w http.ResponseWriter, r *http.Request, projectID string, a ask) ([]store.Exchange, string) {
	notFound := func() ([]store.Exchange, string) {
		assistantauth.WriteMessage(w, http.StatusNotFound, notFoundThread)
		return nil, public.NotFound
	}
	if !ulid.Valid(a.threadID) || a.threadKey == "" {
		return notFound()
	}
	t, err := h.cfg.Store.Thread(r.Context(), projectID, a.threadID)
	if errors.Is(err, store.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		assistantauth.WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, h.cfg.Logger, "reading an assistant thread", err))
		return nil, public.Error
	}
	hash := sha256.Sum256([]byte(a.threadKey))
	if subtle.ConstantTimeCompare(hash[:], t.KeyHash) != 1 {
		return notFound()
	}
	if t.Exchanges >= h.cfg.Limits.ThreadCap {
		assistantauth.WriteMessage(w, http.StatusBadRequest, fmt.Sprintf("this thread holds %d exchanges, its cap (the cap on a thread's exchanges): start a new thread", t.Exchanges))
		return nil, public.Cap
	}
	exs, err := h.cfg.Store.ThreadExchanges(r.Context(), projectID, a.threadID)
	if err != nil {
		assistantauth.WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, h.cfg.Logger, "reading an assistant thread's exchanges", err))
		return nil, public.Error
	}
	return exs, ""
}

// budgets checks the project's day: its exchanges and its tokens. It
// answers a refused request and returns its outcome.
func (h *Handler) budgets(w http.ResponseWriter, r *http.Request, projectID string, pm ProjectModel, now time.Time) string {
	day := now.UTC().Truncate(24 * time.Hour)
	tomorrow := day.Add(24 * time.Hour)
	spent := func(msg string) string {
		w.Header().Set("Retry-After", ratelimit.RetryAfter(tomorrow.Sub(now)))
		assistantauth.WriteMessage(w, http.StatusTooManyRequests, msg)
		return public.Cap
	}
	tokens, err := h.cfg.Store.AssistantTokens(r.Context(), projectID, day)
	if err != nil {
		assistantauth.WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, h.cfg.Logger, "reading the assistant's tokens of the day", err))
		return public.Error
	}
	if tokens >= pm.DailyTokens {
		return spent(fmt.Sprintf("this site's assistant has spent its daily token budget (%d tokens); it answers again after midnight UTC", pm.DailyTokens))
	}
	counts, err := h.cfg.Store.CallerStats(r.Context(), projectID, day, tomorrow)
	if err != nil {
		assistantauth.WriteMessage(w, http.StatusInternalServerError, respond.LogInternal(r, h.cfg.Logger, "counting the assistant's exchanges of the day", err))
		return public.Error
	}
	if counts.Total() >= int64(h.cfg.Limits.DailyCap) {
		return spent(fmt.Sprintf("this site's assistant has answered its daily cap of %d questions; it answers again after midnight UTC", h.cfg.Limits.DailyCap))
	}
	return ""
}

// answer streams the model's answer to req as text deltas of the text
// block textID, and returns the text sent, the finish reason and the
// tokens spent. A model that fails gets an error event; the text sent
// before stays the answer.
func (h *Handler) answer(r *http.Request, sw *streamWriter, m Model, req llm.ChatRequest, textID string) (string, string, int64) {
	var text strings.Builder
	fail := func(err error) (string, string, int64) {
		respond.LogInternal(r, h.cfg.Logger, "streaming the assistant's answer", err)
		sw.send(textChunk{Type: "text-end", ID: textID})
		sw.send(errorChunk{Type: "error", ErrorText: "the assistant's model failed before the answer was complete; retry later"})
		return text.String(), finishError, 0
	}
	ctx, cancel := context.WithTimeout(r.Context(), maxAnswerTime)
	defer cancel()
	cs, err := m.Chat(ctx, req)
	if err != nil {
		return fail(err)
	}
	defer cs.Close()
	reason := finishStop
	for cs.Next() {
		d := cs.Text()
		if d == "" {
			continue
		}
		if text.Len()+len(d) > maxAnswerBytes {
			reason = finishLength
			break
		}
		text.WriteString(d)
		sw.send(textDeltaChunk{Type: "text-delta", ID: textID, Delta: d})
		if sw.err != nil {
			break // the client left; what it was sent is the answer
		}
	}
	tokens := spentTokens(req, text.String(), cs.Usage())
	if err := cs.Err(); err != nil && sw.err == nil && r.Context().Err() == nil {
		_, reason, _ = fail(err)
		return text.String(), reason, tokens
	}
	if reason == finishStop {
		reason = finishReasonOf(cs.StopReason())
	}
	sw.send(textChunk{Type: "text-end", ID: textID})
	return text.String(), reason, tokens
}

// finishReasonOf maps a stream's stop reason (llm's, normalised) to the
// finish event's.
func finishReasonOf(stop string) string {
	switch stop {
	case llm.StopLength:
		return finishLength
	case llm.StopContentFilter:
		return finishContentFilter
	case llm.StopOther:
		return finishOther
	}
	return finishStop
}

// spentTokens is what an answer cost: the provider's usage, or, for what
// it did not report, an estimate of four characters a token.
func spentTokens(req llm.ChatRequest, answer string, u llm.ChatUsage) int64 {
	in, out := u.InputTokens, u.OutputTokens
	if in <= 0 {
		n := utf8.RuneCountInString(req.System)
		for _, m := range req.Messages {
			n += utf8.RuneCountInString(m.Content)
		}
		in = int64((n + 3) / 4)
	}
	if out <= 0 {
		out = int64((utf8.RuneCountInString(answer) + 3) / 4)
	}
	return in + out
}

// messages is the conversation the model reads: the thread's exchanges as
// recorded, then the question with its excerpts.
func messages(history []store.Exchange, last string) []llm.ChatMessage {
	var ms []llm.ChatMessage
	for _, e := range history {
		if strings.TrimSpace(e.Answer) == "" {
			continue // a failed answer: a question without one would be asked twice
		}
		// An earlier question is as untrusted as the new one: in its block.
		ms = append(ms, llm.ChatMessage{Role: "user", Content: questionBlock(e.Question)}, llm.ChatMessage{Role: "assistant", Content: e.Answer})
	}
	return append(ms, llm.ChatMessage{Role: "user", Content: last})
}

// appendSource adds hit's page to sources, once per section link.
func appendSource(sources []store.Source, hit store.DocHit) []store.Source {
	href := hit.Path
	if hit.Anchor != "" {
		href += "#" + hit.Anchor
	}
	for _, s := range sources {
		if s.URL == href {
			return sources
		}
	}
	title := hit.Title
	if hit.Heading != "" {
		title += " — " + hit.Heading
	}
	return append(sources, store.Source{Title: title, URL: href})
}

// record stores the exchange, and the tokens it spent, after the answer:
// with a context of its own, so that a client that left still has its
// question recorded. A failure is logged: the answer was sent.
func (h *Handler) record(r *http.Request, ex store.Exchange, thread *store.Thread, tokens int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), recordTimeout)
	defer cancel()
	if tokens > 0 {
		if err := h.cfg.Store.AddAssistantTokens(ctx, ex.ProjectID, ex.AskedAt, tokens); err != nil {
			respond.LogInternal(r, h.cfg.Logger, "adding the assistant's tokens", err)
		}
	}
	if err := h.cfg.Store.AddExchange(ctx, ex, thread); err != nil {
		respond.LogInternal(r, h.cfg.Logger, "recording an assistant exchange", err)
	}
}

// CallerOf is who asked: web for a request from a web page (an http or
// https Origin: the widget, any browser page), api for one without Origin
// (a program holding the key), other for any other Origin (an extension,
// a sandboxed page's "null").
func CallerOf(r *http.Request) store.CallerKind {
	vs := r.Header.Values("Origin")
	if len(vs) == 0 {
		return store.CallerAPI
	}
	o := strings.ToLower(strings.TrimSpace(vs[0]))
	if len(vs) == 1 && (strings.HasPrefix(o, "https://") || strings.HasPrefix(o, "http://")) {
		return store.CallerWeb
	}
	return store.CallerOther
}
