package hostkit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/githost/internal/hostkit/hosttest"
)

const secret = "SENTINEL_secret_e81c"

func TestParseRemote(t *testing.T) {
	tests := []struct {
		raw  string
		want Remote // zero for an error
	}{
		{"https://github.com/o/r", Remote{"https", "github.com", "o/r"}},
		{"https://github.com/o/r.git", Remote{"https", "github.com", "o/r"}},
		{"https://github.com/o/r.git/", Remote{"https", "github.com", "o/r"}},
		{"HTTPS://GitHub.COM:443/o/r", Remote{"https", "github.com", "o/r"}},
		{"http://127.0.0.1:8080/g/s/r.git", Remote{"http", "127.0.0.1", "g/s/r"}},
		{"https://x-access-token:" + secret + "@github.com/o/r.git", Remote{"https", "github.com", "o/r"}},
		{"ssh://git@gitlab.com:2222/g/s/r.git", Remote{"ssh", "gitlab.com", "g/s/r"}},
		{"git+ssh://git@gitlab.com/g/r", Remote{"git+ssh", "gitlab.com", "g/r"}},
		{"git@github.com:o/r.git", Remote{"ssh", "github.com", "o/r"}},
		{"github.com:o/r", Remote{"ssh", "github.com", "o/r"}},
		{"deploy@git.example.com:/g/r.git", Remote{"ssh", "git.example.com", "g/r"}},
		{"https://github.com/o/r.js", Remote{"https", "github.com", "o/r.js"}},

		{"", Remote{}},
		{"   ", Remote{}},
		{"o/r", Remote{}},
		{"./o/r:x", Remote{}},
		{"/srv/git/r.git", Remote{}},
		{"file:///srv/git/r.git", Remote{}},
		{"ftp://github.com/o/r", Remote{}},
		{"https://github.com", Remote{}},
		{"https://github.com/", Remote{}},
		{"https://github.com/.git", Remote{}},
		{"https://github.com/o//r", Remote{}},
		{"https://github.com/o/../r", Remote{}},
		{"https://github.com/o/r?x=1", Remote{}},
		{"https://github.com/o/r#main", Remote{}},
		{"https://github.com/o/r%20x", Remote{}},
		{"git@:o/r", Remote{}},
		{"https://" + secret + "@/o/r", Remote{}},
		{"https://x:" + secret + "@github.com/o/r?q", Remote{}},
		{"://nohost", Remote{}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseRemote(tt.raw)
			hosttest.CheckParsed(t, secret, got, err, tt.want)
		})
	}
}

// checkEach checks fn on every input of want, naming fn in the failures.
func checkEach[In, Out comparable](t *testing.T, name string, fn func(In) Out, want map[In]Out) {
	t.Helper()
	for in, w := range want {
		if got := fn(in); got != w {
			t.Errorf("%s(%#v) = %#v, want %#v", name, in, got, w)
		}
	}
}

func TestRedact(t *testing.T) {
	checkEach(t, "Redact", Redact, map[string]string{
		"https://github.com/o/r":                         "https://github.com/o/r",
		"https://x-access-token:" + secret + "@h/o/r":    "https://***@h/o/r",
		"https://" + secret + "@h/o/r":                   "https://***@h/o/r",
		"https://u:p@ss:" + secret + "@h:8443/o/r?x=a@b": "https://***@h:8443/o/r?x=a@b",
		"ssh://git@h:22/o/r":                             "ssh://***@h:22/o/r",
		"git@github.com:o/r.git":                         "git@github.com:o/r.git",
		"https://h/o/r@main":                             "https://h/o/r@main",
	})
}

func TestBranch(t *testing.T) {
	checkEach(t, "Branch", Branch, map[string]string{
		"":                    "",
		"main":                "main",
		" main ":              "main",
		"refs/heads/main":     "main",
		"refs/heads/docs/1.x": "docs/1.x",
		"refs/tags/v1":        "refs/tags/v1",
	})
}

func TestPermanentStatus(t *testing.T) {
	checkEach(t, "PermanentStatus", PermanentStatus, map[int]bool{
		200: false, 301: false, 400: true, 401: true, 403: true, 404: true, 408: false, 409: false,
		410: true, 422: true, 425: false, 429: false, 500: false, 502: false, 503: false,
	})
}

func TestTokenSource(t *testing.T) {
	ctx := context.Background()
	if _, err := TokenSource("", nil); err == nil {
		t.Error("no token accepted")
	}
	if _, err := TokenSource(secret, func(context.Context) (string, error) { return secret, nil }); err == nil {
		t.Error("both a token and a function accepted")
	}
	fixed, err := TokenSource(secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fixed(ctx); got != secret || err != nil {
		t.Errorf("fixed token: %q, %v", got, err)
	}
	empty, _ := TokenSource("", func(context.Context) (string, error) { return "", nil })
	if _, err := empty(ctx); !errors.Is(err, ErrEmptyToken) {
		t.Errorf("empty token: %v, want ErrEmptyToken", err)
	}
	boom := errors.New("boom")
	failing, _ := TokenSource("", func(context.Context) (string, error) { return "", boom })
	if _, err := failing(ctx); !errors.Is(err, boom) {
		t.Errorf("failing function: %v, want it wrapped", err)
	}
}

func TestTransportForAPI(t *testing.T) {
	api, _ := url.Parse("https://api.github.com/")
	tr := &Transport{API: api}
	forAPI := func(raw string) bool {
		u, _ := url.Parse(raw)
		return tr.forAPI(u)
	}
	checkEach(t, "forAPI", forAPI, map[string]bool{
		"https://api.github.com/repos":     true,
		"https://API.GitHub.com:443/repos": true,
		"http://api.github.com/repos":      false,
		"https://api.github.com:8443/x":    false,
		"https://uploads.github.com/x":     false,
		"https://evil.example/x":           false,
	})
}

func TestTransportKeepsCredentialsOnTheAPIHost(t *testing.T) {
	type seen struct{ auth, private string }
	otherSaw := make(chan seen, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherSaw <- seen{r.Header.Get("Authorization"), r.Header.Get("Private-Token")}
	}))
	defer other.Close()
	apiSaw := make(chan seen, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiSaw <- seen{r.Header.Get("Authorization"), r.Header.Get("Private-Token")}
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer api.Close()

	apiURL, _ := url.Parse(api.URL)
	var logs bytes.Buffer
	client := HTTPClient(nil, &Transport{
		API: apiURL,
		Auth: func(_ context.Context, h http.Header) error {
			h.Set("Authorization", "Bearer "+secret)
			return nil
		},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	req, _ := http.NewRequest("GET", api.URL+"/repos/o/r?state=open", nil)
	// client-go sets its token header itself, before the transport.
	req.Header.Set("Private-Token", secret)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	if got := <-apiSaw; got != (seen{"Bearer " + secret, secret}) {
		t.Errorf("the API got %+v, want both credentials", got)
	}
	if got := <-otherSaw; got != (seen{}) {
		t.Errorf("the other host got credentials: %+v", got)
	}
	if req.Header.Get("Authorization") != "" {
		t.Error("the transport changed the caller's request")
	}
	out := logs.String()
	if !strings.Contains(out, "path=/repos/o/r") || !strings.Contains(out, "status=307") {
		t.Errorf("the request is not logged:\n%s", out)
	}
	if strings.Contains(out, secret) || strings.Contains(out, "state=open") {
		t.Errorf("the log shows more than metadata:\n%s", out)
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestTransportAuthErrorClosesBody(t *testing.T) {
	api, _ := url.Parse("https://api.example/")
	boom := errors.New("no token today")
	tr := &Transport{
		Base: roundTripFunc(func(*http.Request) (*http.Response, error) {
			t.Error("a request was sent without its credential")
			return nil, errors.New("unreachable")
		}),
		API:  api,
		Auth: func(context.Context, http.Header) error { return boom },
	}
	body := &closeRecorder{Reader: strings.NewReader("{}")}
	req, _ := http.NewRequest("POST", "https://api.example/x", body)
	if _, err := tr.RoundTrip(req); !errors.Is(err, boom) {
		t.Errorf("error %v, want the token error", err)
	}
	if !body.closed {
		t.Error("the request body was not closed")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHTTPClientCopiesTheCallersClient(t *testing.T) {
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("x") })
	jar := &cookieJar{}
	caller := &http.Client{Transport: base, Timeout: 7 * time.Second, Jar: jar}
	api, _ := url.Parse("https://api.example/")
	tr := &Transport{API: api}
	got := HTTPClient(caller, tr)
	if got == caller {
		t.Fatal("the caller's client itself is returned")
	}
	if _, ok := caller.Transport.(roundTripFunc); !ok {
		t.Error("the caller's transport was replaced")
	}
	if got.Transport != tr || got.Timeout != 7*time.Second || got.Jar != jar {
		t.Errorf("the copy lost settings: %+v", got)
	}
	if _, ok := tr.Base.(roundTripFunc); !ok {
		t.Error("the caller's transport is not under the wrapper")
	}
	def := HTTPClient(nil, &Transport{API: api})
	if def.Timeout == 0 {
		t.Error("the default client has no timeout")
	}
}

type cookieJar struct{}

func (*cookieJar) SetCookies(*url.URL, []*http.Cookie) {}
func (*cookieJar) Cookies(*url.URL) []*http.Cookie     { return nil }

func TestParseBaseURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://ghe.example.com/api/v3/": true,
		"http://127.0.0.1:8080":           true,
		"ghe.example.com":                 false,
		"ftp://ghe.example.com":           false,
		"https://":                        false,
		"https://u:" + secret + "@h/":     false,
		"https://h/%zz":                   false,
	} {
		_, err := ParseBaseURL(raw)
		if (err == nil) != ok {
			t.Errorf("ParseBaseURL(%q): %v, want ok=%t", raw, err, ok)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}

func TestNewSetup(t *testing.T) {
	fn := func(context.Context) (string, error) { return secret, nil }
	for name, tt := range map[string]struct {
		token string
		fn    func(context.Context) (string, error)
		base  string
	}{
		"no token":       {},
		"both tokens":    {token: secret, fn: fn},
		"relative base":  {token: secret, base: "ghe.example.com/api/v3"},
		"other scheme":   {token: secret, base: "ssh://gitlab.example.com/"},
		"base with user": {token: secret, base: "https://oauth2:" + secret + "@gitlab.example.com/api/v4"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewSetup(tt.token, tt.fn, tt.base, "https://api.example/", nil)
			if err == nil {
				t.Fatal("NewSetup accepted the configuration")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
	s, err := NewSetup("", fn, "", "https://api.example/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Base != "https://api.example/" || s.API.Host != "api.example" || s.Log == nil {
		t.Errorf("defaults not applied: %+v", s)
	}
}
