package pages

import "github.com/docsapi/docsapi-go/server/store"

// SearchesPage is what readers searched for over a range of days: the
// most searched queries, and those after which no result was opened.
type SearchesPage struct {
	Frame
	From, To string // the range's first and last days, YYYY-MM-DD
	Problem  string // what was wrong with the range asked for
	Total    int64  // every search of the range
	Top      []store.SearchRow
	TopMore  bool // more queries were searched than Top lists
	Gaps     []store.SearchRow
	GapsMore bool // more queries opened nothing than Gaps lists
}

func (SearchesPage) file() string { return "searches.html" }
