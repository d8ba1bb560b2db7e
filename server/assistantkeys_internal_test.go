package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/assistantauth"
	"github.com/docsapi/docsapi-go/server/internal/sqlitetest"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// assistantServer is a Server on a real SQLite file with project alpha
// (domain alpha-docs), an admin key and an assistant key of it, and, on
// its own mux, a test endpoint behind the assistant gate, as the
// /discovery handlers will be.
func assistantServer(t *testing.T, mutate func(*Config)) (s *Server, admin NewKey, assistant NewAssistantKey) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlitetest.FreshFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)
	cfg := Config{Store: st, Now: func() time.Time { return now }}
	if mutate != nil {
		mutate(&cfg)
	}
	if s, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.CreateProject(ctx, store.Project{ID: "alpha", Domain: "alpha-docs"}); err != nil {
		t.Fatal(err)
	}
	if admin, err = s.CreateKey(ctx, KeyParams{Projects: []string{"alpha"}, Scopes: []store.Scope{store.ScopeRead, store.ScopeWrite}}); err != nil {
		t.Fatal(err)
	}
	if assistant, err = s.CreateAssistantKey(ctx, AssistantKeyParams{Project: "alpha", Name: "docs", Origins: []string{"https://docs.example.com/"}}); err != nil {
		t.Fatal(err)
	}
	s.mux.Handle("POST /discovery/test/{domain}", s.assistant.Guard(func(w http.ResponseWriter, _ *http.Request, a assistantauth.Admission) {
		w.Write([]byte(a.Project.ID))
	}))
	return s, admin, assistant
}

func serve(s *Server, method, target, secret string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader("{}"))
	r.RemoteAddr = "192.0.2.1:4000"
	r.Header.Set("Authorization", "Bearer "+secret)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// An admin key is never accepted where an assistant key is needed, nor
// the other way round; and the key's stored form is the hosted one.
func TestAssistantAndAdminKeysAreNeverInterchangeable(t *testing.T) {
	s, admin, assistant := assistantServer(t, nil)
	if !strings.HasPrefix(assistant.Secret, AssistantKeyPrefix) || strings.HasPrefix(admin.Secret, AssistantKeyPrefix) {
		t.Fatalf("secrets %q and %q: want mint_dsc_ on the assistant key alone", assistant.Secret[:9], admin.Secret[:9])
	}
	if got := assistant.Key.Origins; len(got) != 1 || got[0] != "https://docs.example.com" {
		t.Errorf("origins %q, want the one origin normalised", got)
	}
	if w := serve(s, "POST", "/discovery/test/alpha-docs", assistant.Secret); w.Code != http.StatusOK || w.Body.String() != "alpha" {
		t.Fatalf("the assistant key on its endpoint: %d %s", w.Code, w.Body)
	}
	w := serve(s, "POST", "/discovery/test/alpha-docs", admin.Secret)
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "not an admin API key") {
		t.Errorf("an admin key on an assistant endpoint: %d %s, want 401", w.Code, w.Body)
	}
	for _, target := range []string{"/v1/analytics/alpha/views", "/v2/agent/alpha/jobs"} {
		w := serve(s, "GET", target, assistant.Secret)
		var body struct{ Error string }
		json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != http.StatusUnauthorized || !strings.Contains(body.Error, "not an admin API key") {
			t.Errorf("an assistant key on %s: %d %s, want 401", target, w.Code, w.Body)
		}
	}
	keys, err := s.Keys(t.Context())
	if err != nil || len(keys) != 1 {
		t.Errorf("Keys = %v, %v: want the admin key alone", keys, err)
	}
}

// A key revoked through the Server is refused at once, though the gate had
// it cached and the clock has not moved.
func TestRevokeAssistantKeyTakesEffectAtOnce(t *testing.T) {
	s, _, assistant := assistantServer(t, nil)
	if w := serve(s, "POST", "/discovery/test/alpha-docs", assistant.Secret); w.Code != http.StatusOK {
		t.Fatalf("before the revocation: %d %s", w.Code, w.Body)
	}
	if err := s.RevokeAssistantKey(t.Context(), assistant.Key.ID); err != nil {
		t.Fatal(err)
	}
	if w := serve(s, "POST", "/discovery/test/alpha-docs", assistant.Secret); w.Code != http.StatusUnauthorized {
		t.Errorf("after the revocation: %d %s, want 401 at once", w.Code, w.Body)
	}
	if err := s.RevokeAssistantKey(t.Context(), "akey_nope"); err == nil || !strings.Contains(err.Error(), `no assistant key "akey_nope"`) {
		t.Errorf("revoking an unknown key: %v", err)
	}
	keys, err := s.AssistantKeys(t.Context(), "alpha")
	if err != nil || len(keys) != 1 || keys[0].RevokedAt.IsZero() {
		t.Errorf("AssistantKeys = %+v, %v: want the key, revoked", keys, err)
	}
}

// Config.Assistant reaches the gate, and its zero value is the defaults.
func TestAssistantConfig(t *testing.T) {
	s, _, assistant := assistantServer(t, func(c *Config) { c.Assistant.PerAddress = Limit{Requests: 1, Per: time.Minute} })
	serve(s, "POST", "/discovery/test/alpha-docs", assistant.Secret)
	if w := serve(s, "POST", "/discovery/test/alpha-docs", assistant.Secret); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" {
		t.Errorf("past Config.Assistant.PerAddress: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	c, err := AssistantConfig{}.WithDefaults(7)
	if err != nil || c.PerAddress != DefaultAssistantPerAddress() || c.PerProject != DefaultAssistantPerProject() || c.MaxAddresses != 7 {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	if _, err := (AssistantConfig{PerProject: Limit{Requests: -1, Per: time.Hour}}).WithDefaults(7); err == nil || !strings.Contains(err.Error(), "Assistant.PerProject") {
		t.Errorf("a negative budget: %v", err)
	}
}

func TestCreateAssistantKeyChecks(t *testing.T) {
	s, _, _ := assistantServer(t, nil)
	ctx := t.Context()
	if _, err := s.CreateProject(ctx, store.Project{ID: "plain"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    AssistantKeyParams
		want string
	}{
		{AssistantKeyParams{Project: "nope"}, `no project "nope"`},
		{AssistantKeyParams{Project: "plain"}, "no domain identifier"},
		{AssistantKeyParams{Project: "alpha", Origins: []string{"https://*.example.com"}}, "wildcards"},
		{AssistantKeyParams{Project: "alpha", Origins: []string{"https://docs.example.com/guide"}}, "no path"},
	} {
		if _, err := s.CreateAssistantKey(ctx, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CreateAssistantKey(%+v): %v, want %q", tc.p, err, tc.want)
		}
	}
	// Domains: a DNS label, and one project's.
	for _, tc := range []struct {
		p    store.Project
		want string
	}{
		{store.Project{ID: "b", Domain: "Docs"}, "lower case (docs)"},
		{store.Project{ID: "b", Domain: "docs.example"}, `holds '.'`},
		{store.Project{ID: "b", Domain: "alpha-docs"}, `the domain "alpha-docs" is project "alpha"'s already`},
		{store.Project{ID: "alpha", Domain: "other"}, `project "alpha" already exists`},
	} {
		if _, err := s.CreateProject(ctx, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CreateProject(%+v): %v, want %q", tc.p, err, tc.want)
		}
	}
}
