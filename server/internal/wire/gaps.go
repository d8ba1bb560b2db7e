package wire

// GapsReport is the content gaps of a project's range (self-hosted).
type GapsReport struct {
	DateFrom  string     `json:"dateFrom"`
	DateTo    string     `json:"dateTo"`
	Groups    []GapGroup `json:"groups"`
	Truncated bool       `json:"truncated"`
}

// GapGroup is the gaps of one page (page set) or topic (topic set).
type GapGroup struct {
	Page  *string `json:"page"`
	Topic *string `json:"topic"`
	Score int64   `json:"score"`
	Gaps  []Gap   `json:"gaps"`
}

// Gap is one thing readers did not find, with the jobs made from it.
type Gap struct {
	Kind      string        `json:"kind"`
	Key       string        `json:"key"`
	Count     int64         `json:"count"`
	LastSeen  *string       `json:"lastSeen"`
	Examples  []string      `json:"examples"`
	ThumbsUp  *int64        `json:"thumbsUp"`
	Jobs      []GapJob      `json:"jobs"`
	Retrieval *GapRetrieval `json:"retrieval"`
}

// GapJob is a job made from a gap, as it stands.
type GapJob struct {
	ID       string  `json:"id"`
	Status   string  `json:"status"`
	PRLink   *string `json:"prLink"`
	LinkedAt string  `json:"linkedAt"`
}

// GapRetrieval says whether the index now finds a section for a gap's
// text, once the index was updated after a job made from it completed.
type GapRetrieval struct {
	Found          bool     `json:"found"`
	Path           *string  `json:"path"`
	Anchor         *string  `json:"anchor"`
	Heading        *string  `json:"heading"`
	Score          *float64 `json:"score"`
	IndexCommit    string   `json:"indexCommit"`
	IndexUpdatedAt string   `json:"indexUpdatedAt"`
}
