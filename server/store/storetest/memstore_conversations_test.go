package storetest_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// conversationMutants are the reference store's deliberate bugs in the
// assistant's conversations, token days and gap links, and the subtests
// (area/name) that must fail with each; see TestMutantsFail.
var conversationMutants = map[string][]string{
	"threadOverwrite":           {"Conversations/TakenIDsConflictAndStoreNothing"},
	"exchangeOverwrite":         {"Conversations/TakenIDsConflictAndStoreNothing"},
	"questionIDNotUnique":       {"Conversations/TakenIDsConflictAndStoreNothing"},
	"questionIDOnlyOwnColumn":   {"Conversations/TakenIDsConflictAndStoreNothing"},
	"threadAnyProject":          {"Conversations/ThreadsOfAnotherProjectAreNotFound"},
	"newThreadAnyProject":       {"Conversations/ThreadsOfAnotherProjectAreNotFound"},
	"threadCapIgnored":          {"Conversations/ThreadCapRefusesWithErrFullAndStoresNothing"},
	"threadCapInclusive":        {"Conversations/ThreadCapRefusesWithErrFullAndStoresNothing"},
	"dailyCapIgnored":           {"Conversations/DailyCapRefusesWithErrFullAndStoresNothing"},
	"dailyCapByLocalDay":        {"Conversations/DailyCapRefusesWithErrFullAndStoresNothing"},
	"dailyCapAcrossProjects":    {"Conversations/DailyCapRefusesWithErrFullAndStoresNothing"},
	"fullStoresThread":          {"Conversations/DailyCapRefusesWithErrFullAndStoresNothing"},
	"exchangeCountNotKept":      {"Conversations/ThreadHoldsItsExchangesInOrderAndCountsThem"},
	"threadExchangesByID":       {"Conversations/ThreadHoldsItsExchangesInOrderAndCountsThem"},
	"exchangeDropsSources":      {"Conversations/AddThenReadRoundTripsEveryField"},
	"exchangeDropsPageURL":      {"Conversations/AddThenReadRoundTripsEveryField"},
	"threadDropsKeyHash":        {"Conversations/AddThenReadRoundTripsEveryField"},
	"conversationsToInclusive":  {"Conversations/QuerySelectsAHalfOpenRangeByResolution"},
	"conversationsNoResolution": {"Conversations/QuerySelectsAHalfOpenRangeByResolution"},
	"conversationsByTime":       {"Conversations/QueryPagesByIDAfterACursor"},
	"conversationsAfterIncl":    {"Conversations/QueryPagesByIDAfterACursor"},
	"conversationsHasMoreOff":   {"Conversations/QueryPagesByIDAfterACursor"},
	"conversationsLeak":         {"Conversations/QuerySelectsAHalfOpenRangeByResolution"},
	"newestOldestFirst":         {"Conversations/QueryPagesNewestFirstBeforeACursor"},
	"newestAfterGreater":        {"Conversations/QueryPagesNewestFirstBeforeACursor"},
	"newestByTime":              {"Conversations/QueryPagesNewestFirstBeforeACursor"},
	"callerStatsAllTime":        {"Conversations/CallerStatsCountByKindInARange"},
	"callerStatsMixesKinds":     {"Conversations/CallerStatsCountByKindInARange"},
	"tokensOverwrite":           {"Conversations/TokensAddUpPerProjectAndUTCDay"},
	"tokensByLocalDay":          {"Conversations/TokensAddUpPerProjectAndUTCDay"},
	"tokensAcrossProjects":      {"Conversations/TokensAddUpPerProjectAndUTCDay"},
	"deleteKeepsThreads":        {"Conversations/DeleteBeforeRemovesOldExchangesEmptiedThreadsAndTokenDays"},
	"deleteInclusive":           {"Conversations/DeleteBeforeRemovesOldExchangesEmptiedThreadsAndTokenDays"},
	"deleteKeepsTokens":         {"Conversations/DeleteBeforeRemovesOldExchangesEmptiedThreadsAndTokenDays"},
	"deleteCountsThreads":       {"Conversations/DeleteBeforeRemovesOldExchangesEmptiedThreadsAndTokenDays"},
	"deleteKeepsCount":          {"Conversations/DeleteBeforeRemovesOldExchangesEmptiedThreadsAndTokenDays"},
	"linkOverwrites":            {"Conversations/LinkGapsIsIdempotentAndListsInOrder"},
	"linksByKey":                {"Conversations/LinkGapsIsIdempotentAndListsInOrder"},
	"linkAnyJob":                {"Conversations/LinkGapsNeedsAJobOfTheProject"},
	"linkPartial":               {"Conversations/LinkGapsNeedsAJobOfTheProject"},
	"conversationChecksSkipped": {"Conversations/InvalidArgumentsAreRefusedAndStoreNothing"},
	"racyConversationCaps":      {"Conversations/ConcurrentAddsKeepTheCapsAndSumTokensExactly"},
	"racyTokens":                {"Conversations/ConcurrentAddsKeepTheCapsAndSumTokensExactly"},
	"conversationMilliseconds":  {"Conversations/TimesAreKeptToTheMicrosecond"},
}

// convState is what the reference store keeps for ConversationStore.
type convState struct {
	threads   map[string]store.Thread   // by ID; Exchanges kept current
	exchanges map[string]store.Exchange // by ID
	days      map[dayKey]int64          // exchanges per project and UTC day
	tokens    map[dayKey]int64
	links     map[linkKey]store.GapLink
}

type linkKey struct {
	project string
	kind    store.GapKind
	key     string
	job     string
}

// conv returns the state, its maps made. The caller holds m.mu.
func (m *memStore) conv() *convState {
	c := &m.conversations
	if c.threads == nil {
		c.threads = map[string]store.Thread{}
		c.exchanges = map[string]store.Exchange{}
		c.days = map[dayKey]int64{}
		c.tokens = map[dayKey]int64{}
		c.links = map[linkKey]store.GapLink{}
	}
	return c
}

// convTime applies the storage conventions to a time of a conversation.
func (m *memStore) convTime(t time.Time) time.Time {
	if m.is("conversationMilliseconds") && !t.IsZero() {
		return t.UTC().Truncate(time.Millisecond)
	}
	return m.norm(t)
}

// convDay is the day key of project's UTC day of t.
func (m *memStore) convDay(project string, t time.Time, localMutant string) dayKey {
	if m.is(localMutant) {
		// A day that starts at midnight in a zone 6 hours west of UTC.
		return dayKey{project, t.Add(-6 * time.Hour).Truncate(24 * time.Hour).Unix()}
	}
	return dayKey{project, dayOf(t)}
}

func (m *memStore) AddExchange(_ context.Context, e store.Exchange, thread *store.Thread) error {
	if err := store.ValidateAddExchange(e, thread); err != nil && !m.is("conversationChecksSkipped") {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv()
	var th store.Thread
	if thread != nil {
		if _, ok := m.projects[e.ProjectID]; !ok && !m.is("newThreadAnyProject") {
			return fmt.Errorf("project %q: %w", e.ProjectID, store.ErrNotFound)
		}
		if _, ok := c.threads[thread.ID]; ok && !m.is("threadOverwrite") {
			return fmt.Errorf("thread %q: %w", thread.ID, store.ErrConflict)
		}
		th = *thread
		th.KeyHash = bytes.Clone(th.KeyHash)
		if m.is("threadDropsKeyHash") {
			th.KeyHash = nil
		}
		th.CreatedAt = m.convTime(th.CreatedAt)
		th.Exchanges = 0
	} else {
		var ok bool
		th, ok = c.threads[e.ThreadID]
		if !ok || (th.ProjectID != e.ProjectID && !m.is("threadAnyProject")) {
			return fmt.Errorf("thread %q of project %q: %w", e.ThreadID, e.ProjectID, store.ErrNotFound)
		}
	}
	dayMutant := "dailyCapByLocalDay"
	day := m.convDay(e.ProjectID, e.AskedAt, dayMutant)
	held := c.days[day]
	if m.is("racyConversationCaps") {
		// The counts are read, then checked and written under another
		// hold of the lock: concurrent adds all see room.
		m.mu.Unlock()
		time.Sleep(time.Millisecond) // long enough for every concurrent add to read the counts
		m.mu.Lock()
	}
	if m.is("dailyCapAcrossProjects") {
		held = 0
		for k, n := range c.days {
			if k.day == day.day {
				held += n
			}
		}
	}
	if e.DailyCap > 0 && held >= int64(e.DailyCap) && !m.is("dailyCapIgnored") {
		if m.is("fullStoresThread") && thread != nil {
			c.threads[th.ID] = th
		}
		return fmt.Errorf("exchange %q: %w", e.ID, store.ErrFull)
	}
	threadFull := th.Exchanges >= e.ThreadCap
	if m.is("threadCapInclusive") {
		threadFull = th.Exchanges+1 >= e.ThreadCap
	}
	if e.ThreadCap > 0 && threadFull && !m.is("threadCapIgnored") {
		return fmt.Errorf("thread %q: %w", th.ID, store.ErrFull)
	}
	for _, id := range []string{e.ID, e.QuestionID} {
		for _, o := range c.exchanges {
			switch {
			case id == e.ID && o.ID == id && !m.is("exchangeOverwrite"),
				id == e.QuestionID && o.QuestionID == id && !m.is("questionIDNotUnique"),
				id == e.ID && o.QuestionID == id && !m.is("questionIDOnlyOwnColumn"),
				id == e.QuestionID && o.ID == id && !m.is("questionIDOnlyOwnColumn"):
				return fmt.Errorf("exchange %q: message ID %q: %w", e.ID, id, store.ErrConflict)
			}
		}
	}
	e.AskedAt, e.AnsweredAt = m.convTime(e.AskedAt), m.convTime(e.AnsweredAt)
	e.Sources = slices.Clone(e.Sources)
	if m.is("exchangeDropsSources") {
		e.Sources = nil
	}
	if m.is("exchangeDropsPageURL") {
		e.PageURL = ""
	}
	e.ThreadCap, e.DailyCap = 0, 0
	c.exchanges[e.ID] = e
	if !m.is("exchangeCountNotKept") || thread != nil {
		th.Exchanges++
	}
	c.threads[th.ID] = th
	c.days[day] = held + 1
	return nil
}

// thread returns the thread id of the project. The caller holds m.mu.
func (m *memStore) thread(projectID, id string) (store.Thread, error) {
	th, ok := m.conv().threads[id]
	if !ok || th.ProjectID != projectID {
		return store.Thread{}, fmt.Errorf("thread %q of project %q: %w", id, projectID, store.ErrNotFound)
	}
	return th, nil
}

func (m *memStore) Thread(_ context.Context, projectID, id string) (store.Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	th, err := m.thread(projectID, id)
	th.KeyHash = bytes.Clone(th.KeyHash)
	return th, err
}

func (m *memStore) ThreadExchanges(_ context.Context, projectID, id string) ([]store.Exchange, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.thread(projectID, id); err != nil {
		return nil, err
	}
	es := []store.Exchange{}
	for _, e := range m.conv().exchanges {
		if e.ThreadID == id {
			es = append(es, cloneExchange(e))
		}
	}
	slices.SortFunc(es, func(a, b store.Exchange) int {
		if m.is("threadExchangesByID") {
			return strings.Compare(a.ID, b.ID)
		}
		return cmp.Or(a.AskedAt.Compare(b.AskedAt), strings.Compare(a.ID, b.ID))
	})
	return es, nil
}

func cloneExchange(e store.Exchange) store.Exchange {
	e.Sources = slices.Clone(e.Sources)
	return e
}

// inRange reports whether t lies in [from, to), a zero bound open, or
// with the mutant toInclusive, in [from, to].
func inRange(t, from, to time.Time, toInclusive bool) bool {
	if !from.IsZero() && t.Before(from) {
		return false
	}
	if to.IsZero() {
		return true
	}
	return t.Before(to) || (toInclusive && t.Equal(to))
}

func (m *memStore) QueryConversations(_ context.Context, q store.ConversationsQuery) (store.ConversationsPage, error) {
	if err := q.Validate(); err != nil {
		return store.ConversationsPage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// dir is 1 oldest first, -1 newest first: the page holds the IDs
	// that follow the cursor in that order.
	dir := 1
	if q.Newest && !m.is("newestOldestFirst") {
		dir = -1
	}
	afterDir := dir
	if m.is("newestAfterGreater") {
		afterDir = 1
	}
	es := []store.Exchange{}
	for _, e := range m.conv().exchanges {
		switch {
		case e.ProjectID != q.ProjectID && !m.is("conversationsLeak"),
			!inRange(e.AskedAt, q.From, q.To, m.is("conversationsToInclusive")),
			q.Resolution != "" && e.Resolution != q.Resolution && !m.is("conversationsNoResolution"),
			q.After != "" && strings.Compare(e.ID, q.After)*afterDir < 0,
			q.After != "" && e.ID == q.After && !m.is("conversationsAfterIncl"):
			continue
		}
		es = append(es, cloneExchange(e))
	}
	slices.SortFunc(es, func(a, b store.Exchange) int {
		if m.is("conversationsByTime") || (q.Newest && m.is("newestByTime")) {
			return cmp.Or(a.AskedAt.Compare(b.AskedAt)*dir, strings.Compare(b.ID, a.ID))
		}
		return strings.Compare(a.ID, b.ID) * dir
	})
	more := len(es) > q.Limit
	if m.is("conversationsHasMoreOff") {
		more = len(es) >= q.Limit
	}
	if len(es) > q.Limit {
		es = es[:q.Limit]
	}
	return store.ConversationsPage{Exchanges: es, HasMore: more}, nil
}

func (m *memStore) CallerStats(_ context.Context, projectID string, from, to time.Time) (store.CallerCounts, error) {
	if err := store.ValidateCallerStats(projectID, from, to); err != nil {
		return store.CallerCounts{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var c store.CallerCounts
	for _, e := range m.conv().exchanges {
		if e.ProjectID != projectID || (!m.is("callerStatsAllTime") && !inRange(e.AskedAt, from, to, false)) {
			continue
		}
		switch {
		case m.is("callerStatsMixesKinds") && e.Caller == store.CallerOther:
			c.API++
		case e.Caller == store.CallerWeb:
			c.Web++
		case e.Caller == store.CallerAPI:
			c.API++
		default:
			c.Other++
		}
	}
	return c, nil
}

func (m *memStore) AddAssistantTokens(_ context.Context, projectID string, at time.Time, n int64) error {
	if err := store.ValidateAddAssistantTokens(projectID, at, n); err != nil && !m.is("conversationChecksSkipped") {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	day := m.convDay(projectID, at, "tokensByLocalDay")
	if m.is("tokensOverwrite") {
		m.conv().tokens[day] = n
		return nil
	}
	if m.is("racyTokens") {
		// A read, then a write under another hold of the lock: concurrent
		// additions are lost.
		was := m.conv().tokens[day]
		m.mu.Unlock()
		time.Sleep(time.Millisecond)
		m.mu.Lock()
		m.conv().tokens[day] = was + n
		return nil
	}
	m.conv().tokens[day] += n
	return nil
}

func (m *memStore) AssistantTokens(_ context.Context, projectID string, day time.Time) (int64, error) {
	if err := store.ValidateAssistantTokens(projectID, day); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := m.convDay(projectID, day, "tokensByLocalDay")
	if m.is("tokensAcrossProjects") {
		var sum int64
		for k, n := range m.conv().tokens {
			if k.day == key.day {
				sum += n
			}
		}
		return sum, nil
	}
	return m.conv().tokens[key], nil
}

func (m *memStore) DeleteConversationsBefore(_ context.Context, t time.Time) (int, error) {
	if err := store.ValidateDeleteConversationsBefore(t); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv()
	deleted := 0
	for id, e := range c.exchanges {
		if e.AskedAt.Before(t) || (m.is("deleteInclusive") && e.AskedAt.Equal(t)) {
			delete(c.exchanges, id)
			deleted++
			th := c.threads[e.ThreadID]
			if !m.is("deleteKeepsCount") {
				th.Exchanges--
			}
			c.threads[e.ThreadID] = th
		}
	}
	for id := range c.threads {
		held := false
		for _, e := range c.exchanges {
			held = held || e.ThreadID == id
		}
		if !held && !m.is("deleteKeepsThreads") {
			delete(c.threads, id)
			if m.is("deleteCountsThreads") {
				deleted++
			}
		}
	}
	day := dayOf(t)
	for k := range c.days {
		if k.day < day {
			delete(c.days, k)
		}
	}
	if !m.is("deleteKeepsTokens") {
		for k := range c.tokens {
			if k.day < day {
				delete(c.tokens, k)
			}
		}
	}
	return deleted, nil
}

func (m *memStore) LinkGaps(_ context.Context, ls []store.GapLink) error {
	if err := store.ValidateLinkGaps(ls); err != nil && !m.is("conversationChecksSkipped") {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv()
	for _, l := range ls {
		j, ok := m.jobs[l.JobID]
		if !ok || (j.ProjectID != l.ProjectID && !m.is("linkAnyJob")) {
			return fmt.Errorf("job %q of project %q: %w", l.JobID, l.ProjectID, store.ErrNotFound)
		}
		if m.is("linkPartial") {
			c.links[linkKey{l.ProjectID, l.Kind, l.Key, l.JobID}] = l
		}
	}
	for _, l := range ls {
		k := linkKey{l.ProjectID, l.Kind, l.Key, l.JobID}
		if _, ok := c.links[k]; ok && !m.is("linkOverwrites") {
			continue
		}
		l.CreatedAt = m.convTime(l.CreatedAt)
		c.links[k] = l
	}
	return nil
}

func (m *memStore) GapLinks(_ context.Context, projectID string) ([]store.GapLink, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ls := []store.GapLink{}
	for _, l := range m.conv().links {
		if l.ProjectID == projectID {
			ls = append(ls, l)
		}
	}
	slices.SortFunc(ls, func(a, b store.GapLink) int {
		if m.is("linksByKey") {
			return strings.Compare(a.Key, b.Key)
		}
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.JobID, b.JobID),
			strings.Compare(string(a.Kind), string(b.Kind)), strings.Compare(a.Key, b.Key))
	})
	return ls, nil
}
