package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server"
)

// printedConfig runs serve --print-config and decodes what it printed
// loosely, so the test reads fields this version may not have.
func printedConfig(t *testing.T, env map[string]string, args ...string) map[string]any {
	t.Helper()
	r := runCLI(t, env, "", append([]string{"serve", "--print-config"}, args...)...)
	r.expect(t, exitOK)
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("--print-config did not print JSON: %v\n%s", err, r.stdout)
	}
	return m
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// serve limits analytics reads and ingestion per key unless its
// configuration says otherwise; "requests": 0 turns a category off.
func TestServeRateLimitDefaults(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	for _, tt := range []struct {
		name, config string
		want         string
	}{
		{"no configuration file", "", `{"agent":{"requests":0},"analytics":{"requests":600,"per":"1m"},"ingest":{"requests":6000,"per":"1m"}}`},
		{"no rateLimits", `{}`, `{"agent":{"requests":0},"analytics":{"requests":600,"per":"1m"},"ingest":{"requests":6000,"per":"1m"}}`},
		{"0 turns a category off", `{"rateLimits": {"analytics": {"requests": 0}, "ingest": {"requests": 0, "per": "1h"}}}`,
			`{"agent":{"requests":0},"analytics":{"requests":0},"ingest":{"requests":0}}`},
		{"each field defaults on its own", `{"rateLimits": {"agent": {"requests": 100, "per": "1h"}, "analytics": {"per": "1h"}, "ingest": {"requests": 50}}}`,
			`{"agent":{"requests":100,"per":"1h"},"analytics":{"requests":600,"per":"1h"},"ingest":{"requests":50,"per":"1m"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if tt.config != "" {
				args = []string{"--config", configFile(t, tt.config)}
			}
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if got := jsonText(printedConfig(t, env, args...)["rateLimits"]); got != jsonText(want) {
				t.Errorf("rateLimits printed %s, want %s", got, jsonText(want))
			}
		})
	}
	t.Run("negative requests", func(t *testing.T) {
		config := configFile(t, `{"rateLimits": {"ingest": {"requests": -1}}}`)
		runCLI(t, env, "", "serve", "--config", config, "--print-config").expect(t, exitUsage, "rateLimits.ingest.requests")
	})
}

// maxConnections: the flag over the file over the default.
func TestServeMaxConnectionsSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	config := configFile(t, `{"maxConnections": 7}`)
	for _, tt := range []struct {
		name string
		args []string
		want float64
	}{
		{"default", nil, 1024},
		{"file", []string{"--config", config}, 7},
		{"flag over file", []string{"--config", config, "--max-connections", "5"}, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := printedConfig(t, env, tt.args...)["maxConnections"]; got != tt.want {
				t.Errorf("maxConnections printed %v, want %v", got, tt.want)
			}
		})
	}
	runCLI(t, env, "", "serve", "--print-config", "--max-connections", "0").expect(t, exitUsage, "--max-connections")
	bad := configFile(t, `{"maxConnections": -3}`)
	runCLI(t, env, "", "serve", "--print-config", "--config", bad).expect(t, exitUsage, "maxConnections")
}

// TestServeTrustedProxiesSetting: "trustedProxies" takes addresses and
// networks, and prints back as given.
func TestServeTrustedProxiesSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	config := configFile(t, `{"trustedProxies": ["10.0.0.0/8", "192.0.2.7", "2001:db8::/32"]}`)
	got := printedConfig(t, env, "--config", config)["trustedProxies"]
	if fmt.Sprint(got) != "[10.0.0.0/8 192.0.2.7 2001:db8::/32]" {
		t.Errorf("trustedProxies printed %v", got)
	}
	if got := printedConfig(t, env)["trustedProxies"]; got != nil {
		t.Errorf("trustedProxies printed %v without a setting, want none", got)
	}
}

// Through serve, with small budgets so the test is short: reads and
// ingestion are limited per key, each on its own budget, answering 429 with
// Retry-After.
func TestServeLimitsReadsAndIngestionPerKey(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	runCLI(t, env, "", "project", "create", "--id", "handbook", "--repository", "https://git.example.com/handbook.git").expect(t, exitOK)
	newKey := func() string {
		r := runCLI(t, env, "", "key", "create", "--project", "handbook", "--scope", "write")
		r.expect(t, exitOK)
		return strings.TrimSpace(r.stdout)
	}
	key, other := newKey(), newKey()
	// per is left out: it defaults to a minute.
	config := configFile(t, `{"rateLimits": {"analytics": {"requests": 2}, "ingest": {"requests": 3}}}`)
	addr, logs, stop := serveInProcess(t, env, "--config", config)
	defer func() {
		if code := stop(); code != exitOK {
			t.Errorf("exit %d:\n%s", code, logs)
		}
	}()

	do := func(key, method, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+"/v1/analytics/handbook/views", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusTooManyRequests {
			return resp.StatusCode, resp.Header.Get("Retry-After")
		}
		return resp.StatusCode, string(b)
	}
	const views = `{"views": [{"path": "/a"}]}`
	for i := range 3 {
		if code, body := do(key, "POST", views); code != http.StatusAccepted {
			t.Fatalf("ingestion %d: %d %s, want 202", i+1, code, body)
		}
	}
	if code, retry := do(key, "POST", views); code != http.StatusTooManyRequests || retry != "20" {
		t.Fatalf("ingestion 4: %d Retry-After %q, want 429 and 20", code, retry)
	}
	for i := range 2 {
		if code, body := do(key, "GET", ""); code != http.StatusOK {
			t.Fatalf("read %d after ingestion ran out: %d %s, want 200", i+1, code, body)
		}
	}
	if code, retry := do(key, "GET", ""); code != http.StatusTooManyRequests || retry != "30" {
		t.Fatalf("read 3: %d Retry-After %q, want 429 and 30", code, retry)
	}
	if code, body := do(other, "POST", views); code != http.StatusAccepted {
		t.Fatalf("another key: %d %s, want 202", code, body)
	}
}

func TestServeRateLimitsFromTheFile(t *testing.T) {
	decode := func(t *testing.T, rateLimits string) rateLimitsConfig {
		t.Helper()
		cfg, err := decodeConfig([]byte(`{"rateLimits": ` + rateLimits + `}`))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.RateLimits
	}
	for _, tt := range []struct {
		name, rateLimits string
		want             server.RateLimits
	}{
		{"nothing said: the defaults", `{}`, server.DefaultRateLimits()},
		{"0 turns a category off", `{"analytics": {"requests": 0, "per": "1h"}}`,
			server.RateLimits{Ingest: server.DefaultRateLimits().Ingest}},
		{"per defaults to a minute", `{"agent": {"requests": 5}, "ingest": {"requests": 9, "per": "1h"}}`,
			server.RateLimits{Agent: server.Limit{Requests: 5, Per: time.Minute}, Analytics: server.DefaultRateLimits().Analytics,
				Ingest: server.Limit{Requests: 9, Per: time.Hour}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serveRateLimits(decode(t, tt.rateLimits))
			if err != nil || got != tt.want {
				t.Fatalf("serveRateLimits = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := serveRateLimits(decode(t, `{"agent": {"requests": -1}}`)); err == nil {
		t.Error("negative requests accepted")
	}
	if _, err := decodeConfig([]byte(`{"rateLimits": {"ingest": {"requests": "many"}}}`)); err == nil || !strings.Contains(err.Error(), "rateLimits.ingest.requests: want a whole number") {
		t.Errorf("a string for requests: %v", err)
	}
}

// "site" bounds the public feedback and search endpoints: every field
// defaults on its own (a share of a cap after the cap), the values reach
// the server, and a budget cannot be turned off, made negative, or a share
// made larger than what holds it.
func TestServeSiteSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	const shares = `"maxFeedbackPerAddress":20,"maxFeedbackPerNetwork":200`
	def := `{"perAddress":{"requests":60,"per":"1m"},"maxAddresses":100000,"maxBodyBytes":65536,"maxFeedbackPerDay":10000,"maxQueriesPerDay":10000,` + shares + `,"maxQueriesPerAddress":20,"maxQueriesPerNetwork":200}`
	for _, tt := range []struct {
		name, config, want string
	}{
		{"defaults", `{}`, def},
		{"each field on its own", `{"site": {"perAddress": {"per": "1h"}, "maxQueriesPerDay": 500}}`,
			`{"perAddress":{"requests":60,"per":"1h"},"maxAddresses":100000,"maxBodyBytes":65536,"maxFeedbackPerDay":10000,"maxQueriesPerDay":500,` + shares + `,"maxQueriesPerAddress":1,"maxQueriesPerNetwork":10}`},
		{"a share on its own", `{"site": {"maxFeedbackPerAddress": 50}}`,
			`{"perAddress":{"requests":60,"per":"1m"},"maxAddresses":100000,"maxBodyBytes":65536,"maxFeedbackPerDay":10000,"maxQueriesPerDay":10000,"maxFeedbackPerAddress":50,"maxFeedbackPerNetwork":200,"maxQueriesPerAddress":20,"maxQueriesPerNetwork":200}`},
		{"all", `{"site": {"perAddress": {"requests": 5, "per": "10s"}, "maxAddresses": 10, "maxBodyBytes": 4096, "maxFeedbackPerDay": 3, "maxQueriesPerDay": 4,
			"maxFeedbackPerAddress": 1, "maxFeedbackPerNetwork": 2, "maxQueriesPerAddress": 3, "maxQueriesPerNetwork": 4}}`,
			`{"perAddress":{"requests":5,"per":"10s"},"maxAddresses":10,"maxBodyBytes":4096,"maxFeedbackPerDay":3,"maxQueriesPerDay":4,"maxFeedbackPerAddress":1,"maxFeedbackPerNetwork":2,"maxQueriesPerAddress":3,"maxQueriesPerNetwork":4}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config := configFile(t, tt.config)
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if got := jsonText(printedConfig(t, env, "--config", config)["site"]); got != jsonText(want) {
				t.Errorf("site printed %s, want %s", got, jsonText(want))
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			f := &serveFlags{}
			f.register(fs)
			if err := fs.Parse([]string{"--config", config}); err != nil {
				t.Fatal(err)
			}
			set, err := f.resolve(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			site := set.serverConfig(nil, nil).Site
			var given any
			if err := json.Unmarshal([]byte(jsonText(siteConfig{
				PerAddress:   printedLimit(site.PerAddress),
				MaxAddresses: site.MaxAddresses, MaxBodyBytes: site.MaxBodyBytes,
				MaxFeedbackPerDay: site.MaxFeedbackPerDay, MaxQueriesPerDay: site.MaxQueriesPerDay,
				MaxFeedbackPerAddress: site.MaxFeedbackPerAddress, MaxFeedbackPerNetwork: site.MaxFeedbackPerNetwork,
				MaxQueriesPerAddress: site.MaxQueriesPerAddress, MaxQueriesPerNetwork: site.MaxQueriesPerNetwork,
			})), &given); err != nil {
				t.Fatal(err)
			}
			if jsonText(given) != jsonText(want) {
				t.Errorf("the server is given %s, want %s", jsonText(given), jsonText(want))
			}
		})
	}
	for config, msg := range map[string]string{
		`{"site": {"perAddress": {"requests": 0}}}`:                        "site.perAddress needs requests of 1 or more",
		`{"site": {"perAddress": {"per": "-1s"}}}`:                         `site.perAddress.per: "-1s" is negative`,
		`{"site": {"maxBodyBytes": -1}}`:                                   "site.maxBodyBytes must be 0 (the default) or more, got -1",
		`{"site": {"maxFeedbackPerDay": -5}}`:                              "site.maxFeedbackPerDay must be 0 (the default) or more, got -5",
		`{"site": {"maxQueriesPerNetwork": -1}}`:                           "site.maxQueriesPerNetwork must be 0 (the default) or more, got -1",
		`{"site": {"maxFeedbackPerAddress": 300}}`:                         "site.maxFeedbackPerAddress (300) must not be more than site.maxFeedbackPerNetwork (200)",
		`{"site": {"maxQueriesPerAddress": 5, "maxQueriesPerNetwork": 4}}`: "site.maxQueriesPerAddress (5) must not be more than site.maxQueriesPerNetwork (4)",
		`{"site": {"maxQueriesPerDay": 100, "maxQueriesPerNetwork": 101}}`: "site.maxQueriesPerNetwork (101) must not be more than site.maxQueriesPerDay (100)",
		`{"site": {"maxFeedbackPerNetwork": 20000}}`:                       "site.maxFeedbackPerNetwork (20000) must not be more than site.maxFeedbackPerDay (10000)",
	} {
		runCLI(t, env, "", "serve", "--print-config", "--config", configFile(t, config)).expect(t, exitUsage, msg)
	}
}

// serve refuses a job for a project its configuration gives no runner
// (here: a project made with 'project create' and a configuration without
// projects) when the job is created, with a 503 that says what to do,
// instead of accepting it to fail later.
func TestServeRefusesJobsOfProjectsWithoutARunner(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "DOCSAPI_DATA": filepath.Join(dir, "data")}
	runCLI(t, env, "", "project", "create", "--id", "orphan", "--repository", "https://git.example.com/orphan.git").expect(t, exitOK)
	r := runCLI(t, env, "", "key", "create", "--project", "orphan", "--scope", "write")
	r.expect(t, exitOK)
	key := strings.TrimSpace(r.stdout)
	addr, logs, stop := serveInProcess(t, env, "--config", configFile(t, `{}`))
	defer func() {
		if code := stop(); code != exitOK {
			t.Errorf("exit %d:\n%s", code, logs)
		}
	}()
	req, err := http.NewRequest("POST", "http://"+addr+"/v2/agent/orphan/job", strings.NewReader(`{"prompt": "fix the typo"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `this server cannot run jobs of project \"orphan\": the server's configuration has no runner for it`) {
		t.Errorf("create: %d %s, want 503 saying the project has no runner", resp.StatusCode, b)
	}
}
