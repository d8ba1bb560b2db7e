package site

import (
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/internal/respond"
	"github.com/docsapi/docsapi-go/server/store"
)

// limited tells the operators that a submission of kind to project's day
// of now met the day's cap or a client's share of it (reason ReasonCap or
// ReasonShare): through Config.OnLimit every time,
// on the dashboard's overview, and in the log once per project, kind,
// reason and day, so that a flood cannot flood the log too.
func (s *Endpoints) limited(r *http.Request, project string, kind shareKind, reason string, now time.Time) {
	if s.cfg.OnLimit != nil {
		s.cfg.OnLimit(kind.String(), reason)
	}
	var first bool
	var msg string
	switch {
	case reason == ReasonCap:
		first = s.shares.noteCap(project, kind, now)
		msg = "server: a project's day reached its cap of feedback entries; more feedback is refused until the next UTC day"
		if kind == shareSearches {
			msg = "server: a project's day reached its cap of distinct search queries; searches of new ones are counted under " + respond.Quote(store.OtherSearchesQuery) + " until the next UTC day"
		}
	default:
		first = s.shares.noteShare(project, kind, now)
		msg = "server: a client address or network added its share of a project's feedback for the day; its feedback is refused until the next UTC day, others' is not"
		if kind == shareSearches {
			msg = "server: a client address or network added its share of a project's new search queries for the day; its searches of new ones are counted under " + respond.Quote(store.OtherSearchesQuery) + " until the next UTC day"
		}
	}
	if first {
		// The client's address is not logged: the server keeps none.
		s.cfg.Logger.WarnContext(r.Context(), msg, "project", project, "kind", kind.String(), "reason", reason,
			"day", now.UTC().Format(time.DateOnly), "request_id", respond.RequestIDFrom(r.Context()),
			"note", "logged once per project, kind, reason and UTC day; see the metric docsapi_site_limited_total")
	}
}

// untilTomorrow is the Retry-After of a refusal that lasts the UTC day of
// now.
func untilTomorrow(now time.Time) string {
	return ratelimit.RetryAfter(store.FeedbackDay(now).Add(24 * time.Hour).Sub(now))
}

// feedbackShareMessage says which share refused a client's feedback, and
// how large it is (not the cap: the client met its share, not the site's
// cap).
func feedbackShareMessage(refused shareRefusal, addr netip.Addr, c Limits) string {
	addr = addr.Unmap()
	own, net := "this address", "this address's network (its /24)"
	if addr.Is6() {
		own, net = "this address's /64", "this address's network (its /48)"
	}
	perAddress := fmt.Sprintf("(one address may send %d a UTC day); nothing was stored", c.MaxFeedbackPerAddress)
	perNetwork := fmt.Sprintf("(one network may send %d a UTC day); nothing was stored", c.MaxFeedbackPerNetwork)
	switch refused {
	case shareAddress:
		return own + " has sent its share of this site's feedback for today " + perAddress
	case shareNetwork:
		return net + " has sent its share of this site's feedback for today " + perNetwork
	case sharePooledAddress:
		return "the server keeps count of as many addresses as it can today, and the others of " + net + " share one address's allowance of this site's feedback, which is used up " + perAddress
	default:
		return "the server keeps count of as many networks as it can today, and the others share one network's allowance of this site's feedback, which is used up " + perNetwork
	}
}
