package docsapi

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"golang.org/x/time/rate"
)

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"

// DefaultBaseURL is the hosted service. A self-hosted server is reached with
// WithBaseURL.
const DefaultBaseURL = "https://api.mintlify.com"

// Defaults of the client's options.
const (
	DefaultTimeout       = 60 * time.Second
	DefaultMaxRetries    = 3
	DefaultMinRetryDelay = 500 * time.Millisecond
	DefaultMaxRetryDelay = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// Client talks to the documentation platform's API. Create it with NewClient;
// it is immutable and safe for concurrent use by many goroutines.
type Client struct {
	// AgentJobs creates, retrieves and waits for agent jobs.
	AgentJobs *AgentJobsService
	// Analytics reads the analytics exports: page views, visitors,
	// searches, feedback and the assistant's conversations.
	Analytics *AnalyticsService
	// Assistant searches a documentation site, reads its pages and asks
	// its assistant; it needs an assistant key.
	Assistant *AssistantService
	// Deployments triggers deployments, previews and automations, and
	// waits for a deployment to end.
	Deployments *DeploymentsService
	// StaticExports starts static exports of the site, waits for them and
	// makes their download links.
	StaticExports *StaticExportsService

	// cfg, and the key inside it, are behind pointers: fmt prints unexported
	// fields without calling their String methods, so a value field would
	// leak the key through %+v; and for a verb that does not fit a pointer
	// (%s, %q) fmt prints the pointed-to value, which is why the key needs a
	// second pointer of its own.
	cfg *config
}

type config struct {
	key            *secret // a pointer, so no fmt verb can reach the value
	baseURL        string  // no trailing slash
	baseHost       string
	httpClient     *http.Client
	userAgent      string
	defaultProject string
	maxRetries     int
	minRetryDelay  time.Duration
	maxRetryDelay  time.Duration
	maxRetryAfter  time.Duration
	limiter        *rate.Limiter
	logger         *slog.Logger
	jitter         func() float64
	now            func() time.Time
	headers        sharedHeaders
}

// sharedHeaders are the values of the headers every request carries, built
// once per client. Requests share them: http.Header.Set would allocate a
// new slice per header and request. Each slice has capacity 1, so a
// transport that appended a value would copy it; none may change an element
// (a RoundTripper must not modify its request).
type sharedHeaders struct {
	userAgent   []string
	accept      []string
	contentType []string
}

// Option configures a Client in NewClient.
type Option func(*config) error

// NewClient returns a client that authenticates with apiKey, an admin API key
// (on the hosted service it starts with "mint_"). It never reads environment
// variables: pass the key explicitly, for example from os.Getenv.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	apiKey = strings.TrimSpace(apiKey)
	if apiKey == "" {
		return nil, invalid("apiKey", "is empty")
	}
	if strings.ContainsAny(apiKey, " \t\r\n") {
		return nil, invalid("apiKey", "contains white space")
	}
	cfg := &config{
		key:           newSecret(apiKey),
		maxRetries:    DefaultMaxRetries,
		minRetryDelay: DefaultMinRetryDelay,
		maxRetryDelay: DefaultMaxRetryDelay,
		maxRetryAfter: DefaultMaxRetryAfter,
		logger:        slog.New(slog.DiscardHandler),
		jitter:        rand.Float64,
		now:           time.Now,
	}
	if err := WithBaseURL(DefaultBaseURL)(cfg); err != nil {
		return nil, err
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.httpClient == nil {
		cfg.httpClient = defaultHTTPClient()
	}
	cfg.httpClient = withSafeRedirects(cfg.httpClient, cfg.baseHost)
	ua := "docsapi-go/" + Version + " (" + runtime.Version() + ")"
	if cfg.userAgent != "" {
		ua = cfg.userAgent + " " + ua
	}
	cfg.userAgent = ua
	cfg.headers = sharedHeaders{
		userAgent:   []string{ua},
		accept:      []string{"application/json"},
		contentType: []string{"application/json"},
	}

	c := &Client{cfg: cfg}
	c.AgentJobs = &AgentJobsService{client: c}
	c.Analytics = &AnalyticsService{client: c}
	c.Assistant = &AssistantService{client: c}
	c.Deployments = &DeploymentsService{client: c}
	c.StaticExports = &StaticExportsService{client: c}
	return c, nil
}

// String describes the client without its key.
func (c *Client) String() string {
	return fmt.Sprintf("docsapi.Client{baseURL: %s, key: %s}", c.cfg.baseURL, c.cfg.key)
}

// defaultHTTPClient is go-cleanhttp's pooled client with DefaultTimeout,
// keeping as many idle connections per host as WithPrefetch may have
// requests in flight. go-cleanhttp keeps GOMAXPROCS+1: a prefetching export
// with more pages in flight than that closed each connection beyond them as
// its request ended, and dialled (over TLS, a handshake) a new one for the
// next request.
func defaultHTTPClient() *http.Client {
	hc := cleanhttp.DefaultPooledClient()
	hc.Timeout = DefaultTimeout
	t := hc.Transport.(*http.Transport)
	t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, maxPrefetch)
	t.MaxIdleConns = max(t.MaxIdleConns, t.MaxIdleConnsPerHost)
	return hc
}

// WithBaseURL points the client at another server, such as a self-hosted one.
// The URL must be absolute http or https, without credentials, query or
// fragment; it may have a path prefix where the API is mounted.
func WithBaseURL(rawURL string) Option {
	return func(c *config) error {
		// The messages never repeat the URL: someone may have pasted a key
		// into it, and these errors end up in logs.
		u, err := url.Parse(strings.TrimSpace(rawURL))
		var urlErr *url.Error
		switch {
		case errors.As(err, &urlErr):
			return invalid("baseURL", "cannot be parsed: %v", urlErr.Err)
		case err != nil:
			return invalid("baseURL", "cannot be parsed")
		case u.Scheme != "http" && u.Scheme != "https":
			return invalid("baseURL", "must start with http:// or https://")
		case u.Host == "":
			return invalid("baseURL", "has no host")
		case u.User != nil:
			return invalid("baseURL", "must not contain credentials; pass the key to NewClient")
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			return invalid("baseURL", "must not have a query or fragment")
		}
		c.baseURL = strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/")
		c.baseHost = u.Host
		return nil
	}
}

// WithHTTPClient sets the HTTP client. The default is a pooled client from
// go-cleanhttp with a 60 s timeout. The client is not modified: the SDK uses a
// shallow copy whose redirect policy drops the key on a redirect to another
// host or to plain http.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return invalid("httpClient", "is nil")
		}
		c.httpClient = hc
		return nil
	}
}

// WithUserAgent names the calling application. It is sent before the SDK's
// own product token, as in "myapp/1.2 docsapi-go/0.1.0 (go1.25.0)".
func WithUserAgent(ua string) Option {
	return func(c *config) error {
		ua = strings.TrimSpace(ua)
		if strings.ContainsAny(ua, "\r\n") {
			return invalid("userAgent", "contains a line break")
		}
		c.userAgent = ua
		return nil
	}
}

// WithProjectID sets the project that operations use when they are called
// with an empty projectID.
func WithProjectID(projectID string) Option {
	return func(c *config) error {
		if err := checkID("projectID", projectID); err != nil {
			return err
		}
		c.defaultProject = projectID
		return nil
	}
}

// WithMaxRetries sets how many times a failed request is retried (0 turns
// retries off). The default is 3, so at most 4 attempts.
func WithMaxRetries(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return invalid("maxRetries", "must not be negative, got %d", n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithRetryDelays sets the backoff between retries: the first retry waits
// about min, each later one about twice as long, never more than max.
func WithRetryDelays(min, max time.Duration) Option {
	return func(c *config) error {
		if min <= 0 || max <= 0 {
			return invalid("retryDelays", "must be positive, got %s and %s", min, max)
		}
		if min > max {
			return invalid("retryDelays", "min %s is greater than max %s", min, max)
		}
		c.minRetryDelay, c.maxRetryDelay = min, max
		return nil
	}
}

// WithMaxRetryAfter caps the Retry-After wait the client honours by sleeping.
// When a server asks for longer, or for longer than the call's context has
// left, the client returns the *APIError at once with its RetryAfter field
// set, so the caller can decide to wait or not.
// Zero means never sleep on Retry-After.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return invalid("maxRetryAfter", "must not be negative, got %s", d)
		}
		c.maxRetryAfter = d
		return nil
	}
}

// WithRateLimiter makes every attempt, retries included, wait for a token
// from l first. The limiter may be shared with other clients. Off by default.
// The hosted service allows 100 creates and follow-ups per project per hour
// and 100 analytics requests per organisation per hour, so for example
// rate.NewLimiter(rate.Every(36*time.Second), 10) stays within one budget.
func WithRateLimiter(l *rate.Limiter) Option {
	return func(c *config) error {
		if l == nil {
			return invalid("rateLimiter", "is nil")
		}
		c.limiter = l
		return nil
	}
}

// WithLogger logs each attempt's metadata (method, path without query,
// status, attempt, delay, duration, and the request id when the server sent
// one) to l: requests at Debug, retries at Info. Keys, bodies and query
// strings are never logged. The default is silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return invalid("logger", "is nil")
		}
		c.logger = l
		return nil
	}
}

// withSafeRedirects returns a copy of hc whose redirect policy removes the
// Authorization header whenever a redirect leaves the API's host or
// downgrades to plain http. net/http already drops it for other domains, but
// keeps it for subdomains and for the same host over http; neither should see
// an admin key.
func withSafeRedirects(hc *http.Client, apiHost string) *http.Client {
	next := hc.CheckRedirect
	safe := *hc
	safe.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != apiHost || (req.URL.Scheme != "https" && via[0].URL.Scheme == "https") {
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &safe
}
