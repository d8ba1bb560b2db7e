package wire

// ViewsPage is one page of the views export (the ViewsPage schema).
type ViewsPage struct {
	Totals  ViewCounts `json:"totals"`
	Views   []PageView `json:"views"` // never nil: an empty page is []
	HasMore bool       `json:"hasMore"`
}

// ViewCounts is views split into human and AI traffic (the ViewCounts
// schema); Total is Human + AI.
type ViewCounts struct {
	Human int64 `json:"human"`
	AI    int64 `json:"ai"`
	Total int64 `json:"total"`
}

// PageView is the view counts of one path (the PageView schema).
type PageView struct {
	Path  string `json:"path"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Total int64  `json:"total"`
}

// VisitorsPage is one page of the visitors export (the VisitorsPage
// schema).
type VisitorsPage struct {
	Totals   VisitorCounts  `json:"totals"`
	Visitors []PageVisitors `json:"visitors"` // never nil: an empty page is []
	HasMore  bool           `json:"hasMore"`
}

// VisitorCounts is unique visitors split into human and AI traffic (the
// VisitorCounts schema); Total counts a visitor seen as both once.
type VisitorCounts struct {
	Human int64 `json:"human"`
	AI    int64 `json:"ai"`
	Total int64 `json:"total"`
}

// PageVisitors is the unique visitors of one path (the PageVisitors
// schema).
type PageVisitors struct {
	Path  string `json:"path"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Total int64  `json:"total"`
}

// ViewsSeries is a project's views over time (the ViewsSeries schema).
type ViewsSeries struct {
	Interval string       `json:"interval"` // hour or day
	DateFrom string       `json:"dateFrom"`
	DateTo   string       `json:"dateTo"`
	Path     *string      `json:"path"` // null for every path
	Points   []ViewsPoint `json:"points"`
}

// ViewsPoint is the views of one hour or day (the ViewsPoint schema);
// Total is Human + AI, bots apart.
type ViewsPoint struct {
	At    string `json:"at"`
	Human int64  `json:"human"`
	AI    int64  `json:"ai"`
	Bots  int64  `json:"bots"`
	Total int64  `json:"total"`
}

// AgentsPage is a project's views per AI agent and crawler (the
// AgentsPage schema, a self-hosted addition): every agent's total over
// the range, and one page of per-path rows.
type AgentsPage struct {
	DateFrom *string      `json:"dateFrom"` // null when open
	DateTo   *string      `json:"dateTo"`   // null when open
	Path     *string      `json:"path"`     // null for every path
	Class    *string      `json:"class"`    // null for every class
	Agents   []AgentViews `json:"agents"`
	Pages    []AgentPage  `json:"pages"`
	HasMore  bool         `json:"hasMore"`
}

// AgentViews is one agent's views (the AgentViews schema).
type AgentViews struct {
	Name  string `json:"name"`
	Class string `json:"class"`
	Views int64  `json:"views"`
}

// AgentPage is one agent's views of one path (the AgentPage schema).
type AgentPage struct {
	Path  string `json:"path"`
	Name  string `json:"name"`
	Class string `json:"class"`
	Views int64  `json:"views"`
}
