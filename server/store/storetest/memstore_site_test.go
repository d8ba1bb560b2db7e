package storetest_test

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// siteState is what the reference store keeps for FeedbackStore,
// SearchStore and SiteStore, behind memStore's mutex. Its maps
// are made on first use.
type siteState struct {
	feedback     map[string]store.Feedback
	feedbackDays map[dayKey]int64
	queries      map[queryKey]*queryAgg
	clicks       map[clickKey]int64
	searchDays   map[dayKey]*store.SearchDayCounts
	tokens       map[string]store.SiteToken
}

type queryKey struct {
	project string
	day     int64
	query   string
}

type queryAgg struct {
	hits, clicks int64
	last         time.Time
}

type clickKey struct {
	queryKey
	path string
}

// siteMutants are the reference store's deliberate bugs in the methods of
// this file, and the subtests (area/name) that must fail with each; see
// TestMutantsFail.
var siteMutants = map[string][]string{
	"emptyCommentIsNull":         {"Feedback/AddThenQueryRoundTripsEveryFieldOfEverySource"},
	"feedbackDropsContact":       {"Feedback/AddThenQueryRoundTripsEveryFieldOfEverySource"},
	"feedbackIDOverwrite":        {"Feedback/TakenIDConflictsAndMissingProjectIsNotFound"},
	"feedbackOldestFirst":        {"Feedback/PagesAreNewestFirstAndNeverRepeatWhileEntriesArrive", "Feedback/AddThenQueryRoundTripsEveryFieldOfEverySource"},
	"feedbackAfterInclusive":     {"Feedback/PagesAreNewestFirstAndNeverRepeatWhileEntriesArrive"},
	"feedbackIgnoresStatus":      {"Feedback/FiltersSelectBySourceStatusAndHalfOpenRange"},
	"feedbackToInclusive":        {"Feedback/FiltersSelectBySourceStatusAndHalfOpenRange"},
	"feedbackIgnoresPath":        {"Feedback/PathSelectsOnePageExactly"},
	"feedbackPathPrefix":         {"Feedback/PathSelectsOnePageExactly"},
	"feedbackLeaksProjects":      {"Feedback/FiltersSelectBySourceStatusAndHalfOpenRange", "Feedback/TakenIDConflictsAndMissingProjectIsNotFound"},
	"statusRepeatMovesUpdatedAt": {"Feedback/SetStatusMovesAnEntryAndKeepsUpdatedAtWhenRepeated"},
	"statusAcrossProjects":       {"Feedback/SetStatusMovesAnEntryAndKeepsUpdatedAtWhenRepeated"},
	"byPageAgentIsThumbsDown":    {"Feedback/ByPageCountsVotesAndCodePerPath"},
	"byPageHasMoreOffByOne":      {"Feedback/ByPageCountsVotesAndCodePerPath"},
	"feedbackIgnoresCap":         {"Feedback/DailyCapRefusesWithErrFullAndStoresNothing", "Feedback/ConcurrentAddsKeepTheCapExactly"},
	"capCountsOnlyCapped":        {"Feedback/DailyCapRefusesWithErrFullAndStoresNothing"},
	"racyFeedbackCap":            {"Feedback/ConcurrentAddsKeepTheCapExactly"},
	"feedbackChecksSkipped":      {"SiteTokens/InvalidArgumentsAreRefusedAndStoreNothing"},
	"searchesOverwrite":          {"Searches/AddThenQueryCountsHitsClicksAndTheTopResult"},
	"topPageLastPath":            {"Searches/AddThenQueryCountsHitsClicksAndTheTopResult"},
	"searchesOrderByQuery":       {"Searches/RowsAreOrderedByHitsThenQueryAndPagedAfterAPlace"},
	"searchesHasMoreOffByOne":    {"Searches/RowsAreOrderedByHitsThenQueryAndPagedAfterAPlace"},
	"searchesToInclusive":        {"Searches/DayRangeIsHalfOpenOnWholeDays"},
	"unclickedKeepsClicked":      {"Searches/UnclickedSelectsQueriesThatOpenedNothingInTheRange"},
	"unclickedTotalOfGaps":       {"Searches/UnclickedSelectsQueriesThatOpenedNothingInTheRange"},
	"searchesIgnoreCap":          {"Searches/QueriesPastTheDailyCapFoldIntoOther", "Searches/ConcurrentBatchesCountExactlyAndKeepTheCap"},
	"capAdmitsInBatchOrder":      {"Searches/QueriesPastTheDailyCapFoldIntoOther"},
	"foldsNotReported":           {"Searches/QueriesPastTheDailyCapFoldIntoOther"},
	"addedNotReported":           {"Searches/AddThenQueryCountsHitsClicksAndTheTopResult", "Searches/QueriesPastTheDailyCapFoldIntoOther"},
	"clickPairsUncapped":         {"Searches/OpenedResultsPastTheDailyCapCountWithoutTheirPage"},
	"clickOnlyAdmitsQuery":       {"Searches/ClickOnlyAddsAnOpeningToItsSearchAlone"},
	"clickOnlyCountsHit":         {"Searches/ClickOnlyAddsAnOpeningToItsSearchAlone"},
	"searchesLeakProjects":       {"Searches/OtherProjectsSearchesNeverLeak"},
	"searchesNonAtomic":          {"Searches/RefusedBatchStoresNothing"},
	"racySearches":               {"Searches/ConcurrentBatchesCountExactlyAndKeepTheCap"},
	"siteOriginsUnsorted":        {"SiteTokens/CreateThenGetRoundTripsWithOriginsSorted"},
	"siteTokenOverwrite":         {"SiteTokens/TakenTokenConflictsAndMissingProjectIsNotFound"},
	"siteTokensAnyProject":       {"SiteTokens/TokensAreListedPerProjectByCreatedAtThenToken"},
	"siteRevokeOverwrites":       {"SiteTokens/RevokeKeepsTheFirstRevocation"},
}

// st returns the state, its maps made.
func (m *memStore) st() *siteState {
	s := &m.site
	if s.feedback == nil {
		s.feedback = map[string]store.Feedback{}
		s.feedbackDays = map[dayKey]int64{}
		s.queries = map[queryKey]*queryAgg{}
		s.clicks = map[clickKey]int64{}
		s.searchDays = map[dayKey]*store.SearchDayCounts{}
		s.tokens = map[string]store.SiteToken{}
	}
	return s
}

func dayOf(t time.Time) int64 { return t.UTC().Truncate(24 * time.Hour).Unix() }

func (m *memStore) AddFeedback(_ context.Context, n store.NewFeedback) (store.Feedback, error) {
	if err := n.Validate(); err != nil && !m.is("feedbackChecksSkipped") {
		return store.Feedback{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.st()
	if _, ok := m.projects[n.ProjectID]; !ok {
		return store.Feedback{}, fmt.Errorf("project %q: %w", n.ProjectID, store.ErrNotFound)
	}
	if _, ok := s.feedback[n.ID]; ok && !m.is("feedbackIDOverwrite") {
		return store.Feedback{}, fmt.Errorf("feedback %q: %w", n.ID, store.ErrConflict)
	}
	day := dayKey{n.ProjectID, dayOf(n.CreatedAt)}
	if m.is("racyFeedbackCap") {
		// The count is read, then written under another hold of the
		// lock: concurrent adds all see room.
		count := s.feedbackDays[day]
		m.mu.Unlock()
		time.Sleep(time.Millisecond) // long enough for every concurrent add to read the count
		m.mu.Lock()
		if n.DailyCap > 0 && count >= int64(n.DailyCap) {
			return store.Feedback{}, fmt.Errorf("feedback: %w", store.ErrFull)
		}
	} else if n.DailyCap > 0 && s.feedbackDays[day] >= int64(n.DailyCap) && !m.is("feedbackIgnoresCap") {
		return store.Feedback{}, fmt.Errorf("feedback: %w", store.ErrFull)
	}
	if n.DailyCap > 0 || !m.is("capCountsOnlyCapped") {
		s.feedbackDays[day]++
	}
	at := m.norm(n.CreatedAt)
	f := store.Feedback{
		ID: n.ID, ProjectID: n.ProjectID, Path: n.Path, Source: n.Source, Status: store.FeedbackStatusPending,
		Helpful: n.Helpful, Comment: n.Comment, Contact: n.Contact, Code: n.Code, Filename: n.Filename, Lang: n.Lang,
		CreatedAt: at, UpdatedAt: at,
	}
	if f.Comment != nil {
		c := *f.Comment
		f.Comment = &c
		if c == "" && m.is("emptyCommentIsNull") {
			f.Comment = nil
		}
	}
	if m.is("feedbackDropsContact") {
		f.Contact = ""
	}
	s.feedback[n.ID] = f
	return f, nil
}

// selects reports whether f passes the filter.
func (m *memStore) selects(f store.Feedback, q store.FeedbackFilter) bool {
	switch {
	case f.ProjectID != q.ProjectID && !m.is("feedbackLeaksProjects"):
		return false
	case !q.From.IsZero() && f.CreatedAt.Before(q.From):
		return false
	case !q.To.IsZero() && !f.CreatedAt.Before(q.To) && !(m.is("feedbackToInclusive") && f.CreatedAt.Equal(q.To)):
		return false
	case q.Source != "" && f.Source != q.Source:
		return false
	case len(q.Statuses) > 0 && !slices.Contains(q.Statuses, f.Status) && !m.is("feedbackIgnoresStatus"):
		return false
	case q.Path != "" && m.is("feedbackPathPrefix") && !strings.HasPrefix(f.Path, q.Path):
		return false
	case q.Path != "" && !m.is("feedbackPathPrefix") && f.Path != q.Path && !m.is("feedbackIgnoresPath"):
		return false
	}
	return true
}

// newestFirst orders entries as QueryFeedback does.
func (m *memStore) newestFirst(a, b store.FeedbackKey) int {
	if m.is("feedbackOldestFirst") {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	}
	return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
}

func (m *memStore) QueryFeedback(_ context.Context, q store.FeedbackQuery) (store.FeedbackPage, error) {
	if err := q.Validate(); err != nil {
		return store.FeedbackPage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var entries []store.Feedback
	for _, f := range m.st().feedback {
		if !m.selects(f, q.FeedbackFilter) {
			continue
		}
		if q.After != nil {
			c := m.newestFirst(f.Key(), *q.After)
			if c < 0 || (c == 0 && !m.is("feedbackAfterInclusive")) {
				continue
			}
		}
		entries = append(entries, f)
	}
	slices.SortFunc(entries, func(a, b store.Feedback) int { return m.newestFirst(a.Key(), b.Key()) })
	page := store.FeedbackPage{Entries: []store.Feedback{}}
	for _, f := range entries[:min(q.Limit, len(entries))] {
		if f.Comment != nil {
			c := *f.Comment
			f.Comment = &c
		}
		page.Entries = append(page.Entries, f)
	}
	page.HasMore = len(entries) > q.Limit
	return page, nil
}

func (m *memStore) FeedbackByPage(_ context.Context, q store.FeedbackByPageQuery) (store.FeedbackByPage, error) {
	if err := q.Validate(); err != nil {
		return store.FeedbackByPage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	per := map[string]*store.PageFeedback{}
	for _, f := range m.st().feedback {
		if !m.selects(f, q.FeedbackFilter) {
			continue
		}
		p := per[f.Path]
		if p == nil {
			p = &store.PageFeedback{Path: f.Path}
			per[f.Path] = p
		}
		p.Total++
		switch {
		case f.Source == store.FeedbackSourceCodeSnippet:
			p.Code++
		case f.Source == store.FeedbackSourceContextual || f.Source == store.FeedbackSourceThumbsOnly || m.is("byPageAgentIsThumbsDown"):
			if f.Helpful {
				p.ThumbsUp++
			} else {
				p.ThumbsDown++
			}
		}
	}
	rows := []store.PageFeedback{}
	for _, p := range per {
		rows = append(rows, *p)
	}
	slices.SortFunc(rows, func(a, b store.PageFeedback) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), strings.Compare(a.Path, b.Path))
	})
	res := store.FeedbackByPage{Rows: rows[:min(q.Limit, len(rows))], HasMore: len(rows) > q.Limit}
	if m.is("byPageHasMoreOffByOne") {
		res.HasMore = len(rows) >= q.Limit
	}
	return res, nil
}

func (m *memStore) SetFeedbackStatus(_ context.Context, c store.FeedbackStatusChange) (store.Feedback, error) {
	if err := c.Validate(); err != nil {
		return store.Feedback{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.st()
	f, ok := s.feedback[c.ID]
	if !ok || (f.ProjectID != c.ProjectID && !m.is("statusAcrossProjects")) {
		return store.Feedback{}, fmt.Errorf("feedback %q: %w", c.ID, store.ErrNotFound)
	}
	if f.Status != c.Status || m.is("statusRepeatMovesUpdatedAt") {
		f.Status = c.Status
		f.UpdatedAt = m.norm(c.At)
	}
	s.feedback[c.ID] = f
	return f, nil
}

func (m *memStore) AddSearches(_ context.Context, b store.SearchBatch) (store.SearchFolds, error) {
	if !m.is("searchesNonAtomic") {
		if err := b.Validate(); err != nil {
			return store.SearchFolds{}, err
		}
	} else if b.DailyQueryCap < 1 {
		return store.SearchFolds{}, store.Invalid("no cap")
	}
	if m.is("racySearches") {
		// Each search alone, its counts read and written under separate
		// holds of the lock: concurrent adds are lost.
		var folds store.SearchFolds
		for _, s := range b.Searches {
			m.mu.Lock()
			k := queryKey{s.ProjectID, dayOf(s.At), s.Query}
			agg := m.st().queries[k]
			var was queryAgg
			if agg != nil {
				was = *agg
			}
			m.mu.Unlock()
			runtime.Gosched()
			m.mu.Lock()
			was.hits++
			m.st().queries[k] = &was
			m.mu.Unlock()
		}
		return folds, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var folds store.SearchFolds
	groups := map[dayKey][]store.Search{}
	var order []dayKey
	for i, s := range b.Searches {
		if m.is("searchesNonAtomic") {
			if err := s.Validate(); err != nil {
				return folds, fmt.Errorf("search %d: %w", i, err)
			}
			m.addSearchDay(dayKey{s.ProjectID, dayOf(s.At)}, []store.Search{s}, b.DailyQueryCap, &folds)
			continue
		}
		k := dayKey{s.ProjectID, dayOf(s.At)}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	for _, k := range order {
		m.addSearchDay(k, groups[k], b.DailyQueryCap, &folds)
	}
	if m.is("foldsNotReported") {
		return store.SearchFolds{}, nil
	}
	return folds, nil
}

// addSearchDay adds the searches of one project's day, the straightforward
// way: new queries (then new pairs) in byte order while the day has room.
func (m *memStore) addSearchDay(k dayKey, searches []store.Search, cap int, folds *store.SearchFolds) {
	s := m.st()
	day := s.searchDays[k]
	if day == nil {
		day = &store.SearchDayCounts{}
		s.searchDays[k] = day
	}
	held := func(q string) bool { _, ok := s.queries[queryKey{k.project, k.day, q}]; return ok }
	var fresh []string
	for _, sr := range searches {
		if sr.ClickOnly && !m.is("clickOnlyAdmitsQuery") {
			continue // an opening alone admits no query
		}
		if sr.Query != store.OtherSearchesQuery && !held(sr.Query) && !slices.Contains(fresh, sr.Query) {
			fresh = append(fresh, sr.Query)
		}
	}
	if !m.is("capAdmitsInBatchOrder") {
		slices.Sort(fresh)
	}
	admitted := map[string]bool{}
	for _, q := range fresh {
		if day.Queries < int64(cap) || m.is("searchesIgnoreCap") {
			admitted[q] = true
			day.Queries++
			if !m.is("addedNotReported") {
				folds.Added.Queries++
			}
		}
	}
	var pairs []clickKey
	for _, sr := range searches {
		q := sr.Query
		if q != store.OtherSearchesQuery && !held(q) && !admitted[q] {
			if sr.ClickOnly {
				continue // its search is not held: dropped
			}
			q = store.OtherSearchesQuery
			folds.Searches++
		}
		key := queryKey{k.project, k.day, q}
		agg := s.queries[key]
		if agg == nil {
			agg = &queryAgg{}
			s.queries[key] = agg
		}
		if m.is("searchesOverwrite") {
			*agg = queryAgg{}
		}
		if !sr.ClickOnly || m.is("clickOnlyCountsHit") {
			agg.hits++
		}
		if at := m.norm(sr.At); at.After(agg.last) {
			agg.last = at
		}
		if sr.ClickedPath == "" {
			continue
		}
		agg.clicks++
		if q == store.OtherSearchesQuery {
			folds.Clicks++
			continue
		}
		pairs = append(pairs, clickKey{key, sr.ClickedPath})
	}
	slices.SortFunc(pairs, func(a, b clickKey) int {
		return cmp.Or(strings.Compare(a.query, b.query), strings.Compare(a.path, b.path))
	})
	for _, p := range pairs {
		if _, ok := s.clicks[p]; !ok {
			if day.ClickPaths >= int64(cap) && !m.is("clickPairsUncapped") {
				folds.Clicks++
				continue
			}
			day.ClickPaths++
			folds.Added.ClickPaths++
		}
		s.clicks[p]++
	}
}

func (m *memStore) QuerySearches(_ context.Context, q store.SearchesQuery) (store.SearchesResult, error) {
	if err := q.Validate(); err != nil {
		return store.SearchesResult{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.st()
	inRange := func(project string, day int64) bool {
		d := time.Unix(day, 0)
		switch {
		case project != q.ProjectID && !m.is("searchesLeakProjects"):
			return false
		case !q.From.IsZero() && d.Before(q.From):
			return false
		case !q.To.IsZero() && !d.Before(q.To) && !(m.is("searchesToInclusive") && d.Equal(q.To)):
			return false
		}
		return true
	}
	res := store.SearchesResult{Rows: []store.SearchRow{}}
	per := map[string]*store.SearchRow{}
	for k, agg := range s.queries {
		if !inRange(k.project, k.day) {
			continue
		}
		r := per[k.query]
		if r == nil {
			r = &store.SearchRow{Query: k.query}
			per[k.query] = r
		}
		r.Hits += agg.hits
		r.Clicks += agg.clicks
		if agg.last.After(r.LastSearchedAt) {
			r.LastSearchedAt = agg.last
		}
		res.Total += agg.hits
	}
	if m.is("unclickedTotalOfGaps") && q.Unclicked {
		res.Total = 0
		for _, r := range per {
			if r.Clicks == 0 {
				res.Total += r.Hits
			}
		}
	}
	opened := map[[2]string]int64{}
	for k, n := range s.clicks {
		if inRange(k.project, k.day) {
			opened[[2]string{k.query, k.path}] += n
		}
	}
	var rows []store.SearchRow
	for _, r := range per {
		best := int64(0)
		for qp, n := range opened {
			if qp[0] != r.Query {
				continue
			}
			better := n > best || (n == best && qp[1] < r.TopClickedPage)
			if m.is("topPageLastPath") {
				better = qp[1] > r.TopClickedPage
			}
			if better {
				best, r.TopClickedPage = n, qp[1]
			}
		}
		if q.After != nil && (r.Hits > q.After.Hits || (r.Hits == q.After.Hits && r.Query <= q.After.Query)) {
			continue
		}
		if q.Unclicked && r.Clicks > 0 && !m.is("unclickedKeepsClicked") {
			continue
		}
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b store.SearchRow) int {
		if m.is("searchesOrderByQuery") {
			return strings.Compare(a.Query, b.Query)
		}
		return cmp.Or(cmp.Compare(b.Hits, a.Hits), strings.Compare(a.Query, b.Query))
	})
	res.Rows = append(res.Rows, rows[:min(q.Limit, len(rows))]...)
	res.HasMore = len(rows) > q.Limit
	if m.is("searchesHasMoreOffByOne") {
		res.HasMore = len(rows) >= q.Limit
	}
	return res, nil
}

func (m *memStore) CreateSiteToken(_ context.Context, t store.SiteToken) error {
	if err := t.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.st()
	if _, ok := m.projects[t.ProjectID]; !ok {
		return fmt.Errorf("project %q: %w", t.ProjectID, store.ErrNotFound)
	}
	if _, ok := s.tokens[t.Token]; ok && !m.is("siteTokenOverwrite") {
		return fmt.Errorf("site token: %w", store.ErrConflict)
	}
	t.Origins = slices.Clone(t.Origins)
	if !m.is("siteOriginsUnsorted") {
		slices.Sort(t.Origins)
		t.Origins = slices.Compact(t.Origins)
	}
	t.CreatedAt, t.RevokedAt = m.norm(t.CreatedAt), m.norm(t.RevokedAt)
	s.tokens[t.Token] = t
	return nil
}

func (m *memStore) SiteToken(_ context.Context, token string) (store.SiteToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.st().tokens[token]
	if !ok {
		return store.SiteToken{}, fmt.Errorf("site token: %w", store.ErrNotFound)
	}
	return t, nil
}

func (m *memStore) SiteTokens(_ context.Context, projectID string) ([]store.SiteToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := []store.SiteToken{}
	for _, t := range m.st().tokens {
		if projectID == "" || t.ProjectID == projectID || m.is("siteTokensAnyProject") {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b store.SiteToken) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Token, b.Token))
	})
	return ts, nil
}

func (m *memStore) RevokeSiteToken(_ context.Context, token string, at time.Time) error {
	if err := store.ValidateRevokeSiteToken(token, at); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.st()
	t, ok := s.tokens[token]
	if !ok {
		return fmt.Errorf("site token: %w", store.ErrNotFound)
	}
	if t.RevokedAt.IsZero() || m.is("siteRevokeOverwrites") {
		t.RevokedAt = m.norm(at)
	}
	s.tokens[token] = t
	return nil
}
