package pages

import "github.com/docsapi/docsapi-go/server/store"

// SearchesPage is what readers searched for over a period: the most
// searched queries, and those after which no result was opened.
type SearchesPage struct {
	Frame
	Period
	Total    int64 // every search of the period
	Before   int64 // every search of the period before (Period.Compare)
	Top      []store.SearchRow
	TopMore  bool // more queries were searched than Top lists
	Gaps     []store.SearchRow
	GapsMore bool // more queries opened nothing than Gaps lists
}

func (SearchesPage) file() string { return "searches.html" }
