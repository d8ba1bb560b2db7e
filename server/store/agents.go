package store

import (
	"context"
	"time"
)

// AgentStore keeps page views per agent: which AI agents and crawlers, by
// name, read which pages on which UTC days. The counts arrive with the
// views they are part of (ViewCount.Agents), so they are added in AddViews'
// transaction, under the path the cap on distinct paths chose for their
// views: a day holds agent rows only for paths it holds views of.
type AgentStore interface {
	// QueryAgents returns a project's views per agent over q's days: the
	// totals per agent (name and class), Views descending, then Class,
	// then Name, every one of them; and one page of per-path rows, Views
	// descending, then Path, Class, Name. HasMore reports whether a row
	// follows the page. Only agents with views are listed; unknown
	// projects give empty results.
	QueryAgents(ctx context.Context, q AgentsQuery) (AgentsResult, error)
	// AgentSeries returns a project's views per agent and UTC day over
	// q's days, days with views only, ordered by Day, then Class, then
	// Name; q's Limit and Offset are ignored.
	AgentSeries(ctx context.Context, q AgentsQuery) ([]AgentDay, error)
}

// AgentClass is the class of an agent's views: the classes of package
// traffic but human, spelt as its rule table spells them.
type AgentClass string

// The agent classes. AI views are part of ViewCount.AI; those of the bot
// classes, of ViewCount.Bot.
const (
	AgentAI          AgentClass = "ai"
	AgentSearchBot   AgentClass = "search-bot"
	AgentTrainingBot AgentClass = "training-bot"
	AgentOtherBot    AgentClass = "other-bot"
)

// Valid reports whether c is one of the agent classes.
func (c AgentClass) Valid() bool {
	return c == AgentAI || c == AgentSearchBot || c == AgentTrainingBot || c == AgentOtherBot
}

// MaxAgentNameBytes bounds an agent's name. Names are the tokens of a rule
// table (package traffic names each rule), never a user agent as sent, so
// that the names a store holds are as few as a table's rules.
const MaxAgentNameBytes = 64

// AgentCount is the views of one agent, by name and class.
type AgentCount struct {
	Name  string // 1 to MaxAgentNameBytes of printable ASCII
	Class AgentClass
	Views int64
}

// AgentsQuery selects a project's agent views for QueryAgents and
// AgentSeries. A UTC day D is counted when From <= D < To, with From and
// To midnights in UTC; a zero From or To leaves that side open.
type AgentsQuery struct {
	ProjectID string
	From, To  time.Time
	// Path, if not empty, counts that path alone.
	Path string
	// Class, if not empty, counts that class alone.
	Class  AgentClass
	Limit  int // rows per page of QueryAgents, at least 1
	Offset int // rows to skip, at least 0
}

// AgentPathCount is an agent's views of one path.
type AgentPathCount struct {
	Path string
	AgentCount
}

// AgentsResult is what QueryAgents returns.
type AgentsResult struct {
	Totals  []AgentCount
	Rows    []AgentPathCount
	HasMore bool
}

// AgentDay is an agent's views on one UTC day (its midnight).
type AgentDay struct {
	Day time.Time
	AgentCount
}

// AgentDays returns the range of whole UTC days that q's hour range
// touches, as VisitorDays does: what an hour range becomes for
// AgentsQuery.
func AgentDays(q ViewsQuery) (from, to time.Time) { return VisitorDays(q) }

// Validate returns what makes a an unfit part of a ViewCount, or nil.
func (a AgentCount) Validate() error {
	switch {
	case a.Name == "" || len(a.Name) > MaxAgentNameBytes:
		return Invalid("agent name of %d bytes: must have 1 to %d", len(a.Name), MaxAgentNameBytes)
	case !printableASCII(a.Name):
		return Invalid("agent name %q: must be printable ASCII", a.Name)
	case !a.Class.Valid():
		return Invalid("agent %q: unknown class %q", a.Name, a.Class)
	case a.Views < 0:
		return Invalid("agent %q: negative views %d", a.Name, a.Views)
	}
	return nil
}

// validateAgents checks c's Agents: each valid, and their views within
// the views they are part of (AI for AgentAI, Bot for the bot classes).
func (c ViewCount) validateAgents() error {
	var ai, bot int64
	for _, a := range c.Agents {
		if err := a.Validate(); err != nil {
			return err
		}
		sum := &bot
		if a.Class == AgentAI {
			sum = &ai
		}
		if *sum > 1<<63-1-a.Views {
			return Invalid("agent views overflow")
		}
		*sum += a.Views
	}
	if ai > c.AI || bot > c.Bot {
		return Invalid("agents have %d AI and %d bot views, more than the count's %d and %d", ai, bot, c.AI, c.Bot)
	}
	return nil
}

// Validate returns what makes q unfit for QueryAgents, or nil.
func (q AgentsQuery) Validate() error {
	switch {
	case q.Limit < 1:
		return Invalid("limit %d: must be at least 1", q.Limit)
	case q.Offset < 0:
		return Invalid("offset %d: must be at least 0", q.Offset)
	}
	return q.ValidateRange()
}

// ValidateRange returns what makes q unfit for AgentSeries, which ignores
// its Limit and Offset, or nil.
func (q AgentsQuery) ValidateRange() error {
	switch {
	case q.ProjectID == "":
		return Invalid("empty project ID")
	case !q.From.IsZero() && !wholeDay(q.From):
		return Invalid("from %v is not a UTC midnight", q.From)
	case !q.To.IsZero() && !wholeDay(q.To):
		return Invalid("to %v is not a UTC midnight", q.To)
	case q.Class != "" && !q.Class.Valid():
		return Invalid("unknown class %q", q.Class)
	}
	return nil
}

// printableASCII reports whether s has only bytes from space to '~'.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
