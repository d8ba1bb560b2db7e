package wire

// SearchesPage is one page of the searches export (the SearchesPage
// schema); a null NextCursor marks the last page.
type SearchesPage struct {
	Searches      []Search `json:"searches"`
	TotalSearches int64    `json:"totalSearches"`
	NextCursor    *string  `json:"nextCursor"`
}

// Search is one query's counts (the Search schema).
type Search struct {
	SearchQuery    string  `json:"searchQuery"`
	Hits           int64   `json:"hits"`
	CTR            float64 `json:"ctr"`
	TopClickedPage *string `json:"topClickedPage"`
	LastSearchedAt string  `json:"lastSearchedAt"`
}
