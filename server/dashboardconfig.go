package server

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of DashboardConfig.
const (
	DefaultDashboardMaxAge      = 12 * time.Hour
	DefaultDashboardIdleTimeout = time.Hour
)

// DefaultDashboardLoginPerAddress returns the budget of sign-in attempts
// of one client address: plenty for people typing keys, and nothing like
// what guessing would need (keys carry about 256 bits).
func DefaultDashboardLoginPerAddress() Limit { return Limit{Requests: 10, Per: time.Minute} }

// DashboardConfig configures the dashboard.
type DashboardConfig struct {
	// Enabled serves the dashboard under /dashboard/ of the Server's
	// paths. Off by default, so that a host application embedding the
	// Server decides whether it serves pages; docsapi serve turns it on.
	Enabled bool
	// MaxAge bounds a session from its sign-in, however much it is used.
	// DefaultDashboardMaxAge by default.
	MaxAge time.Duration
	// IdleTimeout ends a session unused for this long.
	// DefaultDashboardIdleTimeout by default.
	IdleTimeout time.Duration
	// LoginPerAddress is the budget of sign-in attempts of one client
	// address (an IPv6 client's /64), kept for up to
	// Config.Site.MaxAddresses addresses; past it, 429.
	// DefaultDashboardLoginPerAddress() by default.
	LoginPerAddress Limit
}

// WithDefaults checks c and returns it with its zero fields set to their
// defaults.
func (c DashboardConfig) WithDefaults() (DashboardConfig, error) {
	if c.LoginPerAddress == (Limit{}) {
		c.LoginPerAddress = DefaultDashboardLoginPerAddress()
	}
	if c.LoginPerAddress.Requests <= 0 || c.LoginPerAddress.Per <= 0 {
		return c, fmt.Errorf("server: Config.Dashboard.LoginPerAddress needs positive Requests and Per, got %d per %s", c.LoginPerAddress.Requests, c.LoginPerAddress.Per)
	}
	return c, errors.Join(
		orDefault("Dashboard.MaxAge", &c.MaxAge, DefaultDashboardMaxAge),
		orDefault("Dashboard.IdleTimeout", &c.IdleTimeout, DefaultDashboardIdleTimeout),
	)
}
