// Package gaps finds what readers looked for in a project's documentation
// and did not find: the questions the assistant could not answer, the
// searches after which no result was opened, and the pages readers voted
// down. Aggregate groups them per page or topic, pure; Read gathers its
// input from the store with every read bounded (see the Max constants),
// so that the work of a request does not grow with what traffic stored
// beyond the store's own daily caps.
//
// A gap is named by its kind and key (store.GapKind, store.GapLink): a
// question's key is the question as searches are normalised
// (store.NormaliseQuery, cut to MaxKeyLength characters), a search's its
// normalised query, a page's its path. An operator turns a selection of
// gaps into an agent job (Prompt), and the job is linked back to them.
package gaps

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docsapi/docsapi-go/server/store"
)

// Bounds of Read and Aggregate.
const (
	// MaxQuestions is the most unanswered questions Read takes from a
	// range: the earliest asked, in pages of store.MaxConversationsLimit.
	MaxQuestions = 5 * store.MaxConversationsLimit
	// MaxSearches is the most searches without a click Read takes: the
	// most searched.
	MaxSearches = 500
	// MaxPages is the most pages Read takes of each kind of vote
	// (contextual and thumbs-only feedback): those with the most
	// feedback, as the feedback export counts it.
	MaxPages = 500
	// MaxExamples is how many of a question's wordings a gap keeps.
	MaxExamples = 3
	// MaxKeyLength bounds a gap's key, in characters: a question is cut
	// there (queries are shorter already, store.MaxQueryLength).
	MaxKeyLength = store.MaxQueryLength
)

// Weights of the kinds in a group's score: a question asked is the
// clearest sign that the docs miss something, a vote down says a page
// failed its reader, a search that opened nothing may only have been
// mistyped.
const (
	WeightQuestion = 3
	WeightPage     = 2
	WeightSearch   = 1
)

// Input is what Aggregate groups.
type Input struct {
	// Questions are unanswered exchanges (store.Unanswered).
	Questions []store.Exchange
	// Searches are queries after which no result was opened
	// (store.SearchesQuery.Unclicked); store.OtherSearchesQuery is left
	// out whatever its counts.
	Searches []store.SearchRow
	// Votes are pages' counts of feedback; those with no thumbs down are
	// left out.
	Votes []store.PageFeedback
	// Truncated says a read stopped at its bound: more of the range was
	// stored than the input holds.
	Truncated bool
}

// Gap is one thing readers did not find.
type Gap struct {
	Kind store.GapKind
	Key  string
	// Count is how often: questions asked, searches made, votes down.
	Count int64
	// LastSeen is when it was last asked or searched; zero for a page
	// (the vote counts carry no time).
	LastSeen time.Time
	// Examples are a question's wordings as readers asked them, the
	// latest first, at most MaxExamples; none for the other kinds.
	Examples []string
	// ThumbsUp is, for a page, the votes that found it helpful, beside
	// Count's votes down.
	ThumbsUp int64
}

// Weight is the gap's part of its group's score.
func (g Gap) Weight() int64 {
	switch g.Kind {
	case store.GapQuestion:
		return WeightQuestion * g.Count
	case store.GapPage:
		return WeightPage * g.Count
	}
	return WeightSearch * g.Count
}

// Group is the gaps of one page, or of one topic: Page is a path, else
// Topic is the normalised text that questions asked from no page and
// searches share.
type Group struct {
	Page, Topic string
	Gaps        []Gap // by Weight descending, then kind and key
	// Score ranks groups: the sum of the gaps' weights.
	Score int64
}

// Report is the groups of a range, best first (Score descending, then
// page or topic), and whether the input was truncated.
type Report struct {
	Groups    []Group
	Truncated bool
}

// Find returns the gap of kind and key, and whether the report holds it.
func (r Report) Find(kind store.GapKind, key string) (Gap, bool) {
	for _, g := range r.Groups {
		for _, gap := range g.Gaps {
			if gap.Kind == kind && gap.Key == key {
				return gap, true
			}
		}
	}
	return Gap{}, false
}

// QuestionKey returns the key of a question's gap.
func QuestionKey(question string) string {
	k := store.NormaliseQuery(question)
	if utf8.RuneCountInString(k) <= MaxKeyLength {
		return k
	}
	n := 0
	for i := range k {
		if n == MaxKeyLength {
			return strings.TrimSpace(k[:i])
		}
		n++
	}
	return k
}

// PagePath returns the path of a question's PageURL (a path, or a URL
// whose path is taken), without query or fragment and without a trailing
// slash but for "/"; "" when it names no path.
func PagePath(pageURL string) string {
	if pageURL == "" {
		return ""
	}
	u, err := url.Parse(pageURL)
	if err != nil || !strings.HasPrefix(u.Path, "/") || strings.ContainsFunc(u.Path, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	p := u.Path
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	return p
}

// question is what Aggregate gathers of one question's gap.
type question struct {
	gap   Gap
	pages map[string]int64 // askings per page path
}

// Aggregate groups in's gaps per page or topic. A question's gap goes to
// the page it was asked from most often (ties: the path first in byte
// order), or to its topic when no asking named a page; a search's to its
// query's topic; a page's to the page. Pure: the same input gives the
// same report.
func Aggregate(in Input) Report {
	groups := map[[2]string]*Group{} // {page, topic}
	groupOf := func(page, topic string) *Group {
		k := [2]string{page, topic}
		if page != "" {
			k[1] = ""
		}
		g := groups[k]
		if g == nil {
			g = &Group{Page: k[0], Topic: k[1]}
			groups[k] = g
		}
		return g
	}

	questions := map[string]*question{}
	for _, e := range in.Questions {
		key := QuestionKey(e.Question)
		if key == "" {
			continue
		}
		q := questions[key]
		if q == nil {
			q = &question{gap: Gap{Kind: store.GapQuestion, Key: key}, pages: map[string]int64{}}
			questions[key] = q
		}
		q.gap.Count++
		if e.AskedAt.After(q.gap.LastSeen) {
			q.gap.LastSeen = e.AskedAt
		}
		if p := PagePath(e.PageURL); p != "" {
			q.pages[p]++
		}
		q.gap.Examples = addExample(q.gap.Examples, strings.TrimSpace(e.Question))
	}
	for _, q := range questions {
		page, most := "", int64(0)
		for p, n := range q.pages {
			if n > most || n == most && p < page {
				page, most = p, n
			}
		}
		g := groupOf(page, q.gap.Key)
		g.Gaps = append(g.Gaps, q.gap)
	}
	for _, s := range in.Searches {
		if s.Query == store.OtherSearchesQuery || s.Query == "" || s.Clicks > 0 || s.Hits <= 0 {
			continue
		}
		g := groupOf("", s.Query)
		g.Gaps = append(g.Gaps, Gap{Kind: store.GapSearch, Key: s.Query, Count: s.Hits, LastSeen: s.LastSearchedAt})
	}
	votes := map[string]*Gap{}
	for _, v := range in.Votes {
		gap := votes[v.Path]
		if gap == nil {
			gap = &Gap{Kind: store.GapPage, Key: v.Path}
			votes[v.Path] = gap
		}
		gap.Count += v.ThumbsDown
		gap.ThumbsUp += v.ThumbsUp
	}
	for path, gap := range votes {
		if gap.Count > 0 {
			g := groupOf(path, "")
			g.Gaps = append(g.Gaps, *gap)
		}
	}

	out := Report{Groups: make([]Group, 0, len(groups)), Truncated: in.Truncated}
	for _, g := range groups {
		slices.SortFunc(g.Gaps, func(a, b Gap) int {
			return cmp.Or(cmp.Compare(b.Weight(), a.Weight()), strings.Compare(string(a.Kind), string(b.Kind)), strings.Compare(a.Key, b.Key))
		})
		for _, gap := range g.Gaps {
			g.Score += gap.Weight()
		}
		out.Groups = append(out.Groups, *g)
	}
	slices.SortFunc(out.Groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Page, b.Page), strings.Compare(a.Topic, b.Topic))
	})
	return out
}

// addExample puts a wording first among examples (the input is read in
// the order asked, so the latest ends first), once, keeping MaxExamples.
func addExample(examples []string, wording string) []string {
	if i := slices.Index(examples, wording); i >= 0 {
		examples = slices.Delete(examples, i, i+1)
	}
	examples = slices.Insert(examples, 0, wording)
	if len(examples) > MaxExamples {
		examples = examples[:MaxExamples]
	}
	return examples
}

// Source is the part of the store Read reads.
type Source interface {
	QueryConversations(ctx context.Context, q store.ConversationsQuery) (store.ConversationsPage, error)
	QuerySearches(ctx context.Context, q store.SearchesQuery) (store.SearchesResult, error)
	FeedbackByPage(ctx context.Context, q store.FeedbackByPageQuery) (store.FeedbackByPage, error)
}

// Read gathers the Input of a project's range [from, to) from src: at
// most MaxQuestions unanswered questions (the earliest), MaxSearches
// searches without a click (the most searched; searches count per UTC
// day, so the range should be of whole days), and the votes of at most
// MaxPages pages per source of votes. Truncated says a bound was met.
func Read(ctx context.Context, src Source, projectID string, from, to time.Time) (Input, error) {
	var in Input
	q := store.ConversationsQuery{ProjectID: projectID, From: from, To: to, Limit: store.MaxConversationsLimit, Resolution: store.Unanswered}
	for {
		page, err := src.QueryConversations(ctx, q)
		if err != nil {
			return Input{}, err
		}
		in.Questions = append(in.Questions, page.Exchanges...)
		if !page.HasMore || len(page.Exchanges) == 0 {
			break
		}
		if len(in.Questions) >= MaxQuestions {
			in.Truncated = true
			break
		}
		q.After = page.Exchanges[len(page.Exchanges)-1].ID
	}
	// One more row than the bound, since (other searches) may be among
	// them and is not a gap.
	searches, err := src.QuerySearches(ctx, store.SearchesQuery{ProjectID: projectID, From: from, To: to, Limit: MaxSearches + 1, Unclicked: true})
	if err != nil {
		return Input{}, err
	}
	rows := slices.DeleteFunc(searches.Rows, func(r store.SearchRow) bool { return r.Query == store.OtherSearchesQuery })
	if len(rows) > MaxSearches {
		rows, searches.HasMore = rows[:MaxSearches], true
	}
	in.Searches = rows
	in.Truncated = in.Truncated || searches.HasMore
	for _, source := range []store.FeedbackSource{store.FeedbackSourceContextual, store.FeedbackSourceThumbsOnly} {
		res, err := src.FeedbackByPage(ctx, store.FeedbackByPageQuery{
			FeedbackFilter: store.FeedbackFilter{ProjectID: projectID, From: from, To: to, Source: source},
			Limit:          MaxPages,
		})
		if err != nil {
			return Input{}, err
		}
		in.Votes = append(in.Votes, res.Rows...)
		in.Truncated = in.Truncated || res.HasMore
	}
	return in, nil
}
