package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/ratelimit"
	"github.com/docsapi/docsapi-go/server/site"
	"github.com/docsapi/docsapi-go/server/store"
)

// SiteTokenHeader carries the site token; a "token" query parameter may
// carry it instead, for navigator.sendBeacon, which cannot set headers.
const SiteTokenHeader = site.TokenHeader

// Defaults of SiteConfig.
const (
	DefaultSiteMaxAddresses = 100_000
	DefaultSiteMaxBodyBytes = 64 << 10
)

// The default shares of a day's cap (SiteConfig.MaxFeedbackPerAddress and
// the like) are these fractions of it: filling a cap takes at least
// SiteAddressesToFillACap addresses in SiteNetworksToFillACap networks.
const (
	SiteAddressesToFillACap = 500
	SiteNetworksToFillACap  = 50
)

// SiteShareDefaults returns the default shares of one address and one
// network of a daily cap: a 500th and a 50th of it, at least 1 each.
func SiteShareDefaults(dailyCap int) (perAddress, perNetwork int) {
	return max(dailyCap/SiteAddressesToFillACap, 1), max(dailyCap/SiteNetworksToFillACap, 1)
}

// DefaultSitePerAddress returns the budget of one client address on the
// site endpoints: far above what a reader sends (a vote, a few searches a
// minute), with room for an office or a school behind one address.
func DefaultSitePerAddress() Limit { return Limit{Requests: 60, Per: time.Minute} }

// SiteConfig bounds the public site endpoints. Unlike RateLimits, its zero
// value is not "no limit" but the defaults: these endpoints are open to
// anyone on the Internet.
type SiteConfig struct {
	// PerAddress is the budget of one client address (an IPv6 client's
	// /64), preflights included; past it, 429 with Retry-After.
	// DefaultSitePerAddress() by default. The address is the connection's
	// peer, or what Config.TrustedProxies vouch for.
	PerAddress Limit
	// MaxAddresses bounds the addresses whose budgets are remembered at
	// once (about 100 bytes each), and separately the addresses and the
	// networks whose shares of the day's caps are (see
	// MaxFeedbackPerAddress). DefaultSiteMaxAddresses by default.
	MaxAddresses int
	// MaxBodyBytes bounds a request body (413 past it).
	// DefaultSiteMaxBodyBytes by default, which holds the longest fields
	// allowed even with every character escaped.
	MaxBodyBytes int64
	// MaxFeedbackPerDay bounds the feedback entries of a project's UTC
	// day; past it, 429 and nothing stored. store.DefaultDailyFeedbackCap
	// by default.
	MaxFeedbackPerDay int
	// MaxQueriesPerDay bounds the distinct search queries (and pairs of
	// query and opened result) of a project's UTC day; past it, searches
	// are counted under store.OtherSearchesQuery. store.DefaultDailyQueryCap
	// by default.
	MaxQueriesPerDay int

	// MaxFeedbackPerAddress bounds the feedback entries one client
	// address (an IPv6 client's /64) may add to a project's UTC day, and
	// MaxFeedbackPerNetwork those of its network (an IPv4 /24, an IPv6
	// /48); past either, 429 and nothing stored, while other addresses go
	// on. They are the shares that keep a script from filling
	// MaxFeedbackPerDay for every reader. By default SiteShareDefaults
	// of MaxFeedbackPerDay. Each process counts its own (replicas do not
	// add up), in memory, for the day; addresses beyond MaxAddresses
	// share one allowance (see package site).
	MaxFeedbackPerAddress, MaxFeedbackPerNetwork int
	// MaxQueriesPerAddress and MaxQueriesPerNetwork bound the searches one
	// address or network may make that add a query, or a pair of query
	// and opened result, new to a project's UTC day; past either, its
	// searches still count (totals stay exact), but those of queries the
	// day does not hold are counted under store.OtherSearchesQuery, and
	// results it opens that the day does not hold are counted without the
	// result. By default SiteShareDefaults of MaxQueriesPerDay; counted as
	// the feedback's are.
	MaxQueriesPerAddress, MaxQueriesPerNetwork int
}

// WithDefaults checks c and returns it with its zero fields set to their
// defaults, as New uses it: so that a program can show the values in
// effect.
func (c SiteConfig) WithDefaults() (SiteConfig, error) {
	if c.PerAddress == (Limit{}) {
		c.PerAddress = DefaultSitePerAddress()
	}
	if c.PerAddress.Requests <= 0 || c.PerAddress.Per <= 0 {
		return c, fmt.Errorf("server: Config.Site.PerAddress needs positive Requests and Per, got %d per %s", c.PerAddress.Requests, c.PerAddress.Per)
	}
	if err := errors.Join(
		orDefault("Site.MaxAddresses", &c.MaxAddresses, DefaultSiteMaxAddresses),
		orDefault("Site.MaxFeedbackPerDay", &c.MaxFeedbackPerDay, store.DefaultDailyFeedbackCap),
		orDefault("Site.MaxQueriesPerDay", &c.MaxQueriesPerDay, store.DefaultDailyQueryCap),
		orDefault("Site.MaxBodyBytes", &c.MaxBodyBytes, DefaultSiteMaxBodyBytes),
	); err != nil {
		return c, err
	}
	for _, sh := range []struct {
		kind                   string
		dailyCap               int
		perAddress, perNetwork *int
	}{
		{"Feedback", c.MaxFeedbackPerDay, &c.MaxFeedbackPerAddress, &c.MaxFeedbackPerNetwork},
		{"Queries", c.MaxQueriesPerDay, &c.MaxQueriesPerAddress, &c.MaxQueriesPerNetwork},
	} {
		addr, net := SiteShareDefaults(sh.dailyCap)
		if err := errors.Join(
			orDefault("Site.Max"+sh.kind+"PerAddress", sh.perAddress, addr),
			orDefault("Site.Max"+sh.kind+"PerNetwork", sh.perNetwork, net),
		); err != nil {
			return c, err
		}
		switch {
		case *sh.perAddress > *sh.perNetwork:
			return c, fmt.Errorf("server: Config.Site.Max%[1]sPerAddress (%[2]d) must not be more than Max%[1]sPerNetwork (%[3]d): an address is part of its network", sh.kind, *sh.perAddress, *sh.perNetwork)
		case *sh.perNetwork > sh.dailyCap:
			return c, fmt.Errorf("server: Config.Site.Max%[1]sPerNetwork (%[2]d) must not be more than Max%[1]sPerDay (%[3]d)", sh.kind, *sh.perNetwork, sh.dailyCap)
		}
	}
	return c, nil
}

// SiteStats counts what the site endpoints refused or folded since the
// Server was made, in this process.
type SiteStats struct {
	// Honeypot counts submissions whose honeypot field was filled: they
	// were answered as if stored, and dropped.
	Honeypot int64
	// RateLimited counts requests refused by the per-address budget.
	RateLimited int64
	// FeedbackFull counts feedback refused because its project's day
	// held MaxFeedbackPerDay entries.
	FeedbackFull int64
	// FeedbackShare counts feedback refused because its address or
	// network had added its share of the day (MaxFeedbackPerAddress,
	// MaxFeedbackPerNetwork).
	FeedbackShare int64
	// FoldedSearches counts searches counted under
	// store.OtherSearchesQuery, past MaxQueriesPerDay or a share.
	FoldedSearches int64
	// UnattributedClicks counts openings of a result counted without the
	// result, past MaxQueriesPerDay pairs or a share.
	UnattributedClicks int64
	// SearchesShare counts searches that lost their query or opened
	// result (counted as FoldedSearches or UnattributedClicks) because
	// their address or network had added its share of the day
	// (MaxQueriesPerAddress, MaxQueriesPerNetwork).
	SearchesShare int64
	// Addresses is the number of client addresses whose budgets are
	// remembered now (at most MaxAddresses).
	Addresses int
	// ShareEntries is the number of addresses and networks whose shares
	// of today's caps are remembered now (at most MaxAddresses of each).
	ShareEntries int
}

// SiteStats returns what the site endpoints refused and folded so far.
func (s *Server) SiteStats() SiteStats { return SiteStats(s.site.Stats()) }

// siteLimits are c's values, its defaults applied, as package site takes
// them.
func siteLimits(c SiteConfig) site.Limits {
	return site.Limits{
		PerAddress: ratelimit.Limit(c.PerAddress), MaxAddresses: c.MaxAddresses, MaxBodyBytes: c.MaxBodyBytes,
		MaxFeedbackPerDay: c.MaxFeedbackPerDay, MaxQueriesPerDay: c.MaxQueriesPerDay,
		MaxFeedbackPerAddress: c.MaxFeedbackPerAddress, MaxFeedbackPerNetwork: c.MaxFeedbackPerNetwork,
		MaxQueriesPerAddress: c.MaxQueriesPerAddress, MaxQueriesPerNetwork: c.MaxQueriesPerNetwork,
	}
}

// onSiteLimit tells hook, if set, of a site submission that met a cap or
// a share.
func onSiteLimit(hook func(SiteLimitInfo)) func(kind, reason string) {
	if hook == nil {
		return nil
	}
	return func(kind, reason string) { hook(SiteLimitInfo{Kind: kind, Reason: reason}) }
}
