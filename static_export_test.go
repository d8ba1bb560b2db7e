package docsapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The doubles below answer as the static export API's reference
// (static-export-openapi.json of the platform's public docs) says: 202 with
// the job, 200 with the job or the bundle, errors as {"error"}.

const (
	exportJobID     = "se_3f9a2c1b8e7d4a06"
	exportJobPath   = "/v1/static-export/jobs/" + exportJobID
	exportBundleURL = "https://bundles.example-storage.test/se_3f9a2c1b8e7d4a06/bundle.tar.gz?X-Amz-Signature=abc123"
)

func exportJobJSON(status string) string {
	return `{"jobId":"` + exportJobID + `","status":"` + status + `","progress":0,"pageCount":0,` +
		`"createdAt":"2026-08-14T09:21:07Z","updatedAt":"2026-08-14T09:21:07Z"}`
}

var wantRunningExport = &StaticExportJob{
	ID: exportJobID, Status: StaticExportRunning, Progress: 42.5, PageCount: 128,
	CreatedAt: time.Date(2026, 8, 14, 9, 21, 7, 0, time.UTC),
	UpdatedAt: time.Date(2026, 8, 14, 9, 22, 30, 0, time.UTC),
}

func TestStaticExportStart(t *testing.T) {
	c, mt := newTestClient(t)
	log := serve(t, mt, on(http.MethodPost, "/v1/static-export/jobs", replyFixture(t, http.StatusAccepted, "static_export_job_running.json")))
	got, err := c.StaticExports.Start(t.Context(), StaticExportParams{
		Domain:  "docs.example.com",
		Version: "2024-06-01",
		Paths:   []string{"index", "guides/getting-started", "api-reference/introduction"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantRunningExport, got); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	req := log.Requests()[0]
	wantStandardHeaders(t, req, true)
	goldenJSON(t, "static_export_request.golden.json", []byte(req.Body))
}

// Version and paths are optional: absent, not empty, when not given.
func TestStaticExportStartSendsOnlyTheDomainByDefault(t *testing.T) {
	c, mt := newTestClient(t)
	log := serve(t, mt, on(http.MethodPost, "/v1/static-export/jobs", replyJSON(http.StatusAccepted, exportJobJSON("queued"))))
	for _, paths := range [][]string{nil, {}} {
		if _, err := c.StaticExports.Start(t.Context(), StaticExportParams{Domain: "acme.mintlify.app", Paths: paths}); err != nil {
			t.Fatal(err)
		}
	}
	for _, req := range log.Requests() {
		if req.Body != `{"domain":"acme.mintlify.app"}` {
			t.Errorf("body %s, want the domain alone", req.Body)
		}
	}
}

func TestStaticExportDomainIsAHostnameAlone(t *testing.T) {
	for _, ok := range []string{"docs.example.com", "acme.mintlify.app", "localhost", "DOCS.Example.COM",
		"xn--dkumanlar-o2a.example", "a-b.c-d.example", strings.Repeat("a", 63) + ".example"} {
		if err := checkHostname("domain", ok); err != nil {
			t.Errorf("checkHostname(%q) = %v, want nil", ok, err)
		}
	}
	for _, tt := range []struct{ domain, says string }{
		{"", "empty"},
		{"https://docs.example.com", "scheme"},
		{"docs.example.com/", "trailing slash"},
		{"docs.example.com/docs", "path"},
		{"docs.example.com?x=1", "query"},
		{"docs.example.com:443", "port"},
		{"user@docs.example.com", "credentials"},
		{"docs.example.com.", "dot"},
		{"docs..example.com", "label of 0"},
		{".example.com", "label of 0"},
		{strings.Repeat("a", 64) + ".example", "label of 64"},
		{strings.Repeat("abcdefghi.", 26) + "com", "at most 253"},
		{"-docs.example.com", "hyphen"},
		{"docs-.example.com", "hyphen"},
		{"dökümanlar.example", "xn--"},
		{"docs example.com", `' '`},
		{"docs_site.example.com", `'_'`},
	} {
		err := checkHostname("domain", tt.domain)
		var verr *ValidationError
		if !errors.As(err, &verr) || verr.Param != "domain" || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("checkHostname(%q) = %v, want a domain error saying %q", tt.domain, err, tt.says)
		}
	}
	// Start checks before sending.
	c, mt := newTestClient(t)
	wantRejected(t, mt, errOf(c.StaticExports.Start(t.Context(), StaticExportParams{Domain: "https://docs.example.com/"})), "domain")
	wantRejected(t, mt, errOf(c.StaticExports.Start(t.Context(), StaticExportParams{Domain: "docs.example.com", Paths: []string{"index", " "}})), "paths")
}

func TestStaticExportGetAndStatuses(t *testing.T) {
	for _, tt := range []struct {
		status          StaticExportStatus
		known, terminal bool
	}{
		{StaticExportQueued, true, false},
		{StaticExportRunning, true, false},
		{StaticExportCompleted, true, true},
		{StaticExportFailed, true, true},
		{"cancelled", false, false}, // unknown: kept, and not terminal
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			c, mt := newTestClient(t)
			log := serve(t, mt, on(http.MethodGet, exportJobPath, replyJSON(http.StatusOK, exportJobJSON(string(tt.status)))))
			got, err := c.StaticExports.Get(t.Context(), exportJobID)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != exportJobID || got.Status != tt.status || got.Status.Known() != tt.known || got.Status.Terminal() != tt.terminal {
				t.Errorf("job %+v: Known %v, Terminal %v; want %q, %v, %v", got, got.Status.Known(), got.Status.Terminal(), tt.status, tt.known, tt.terminal)
			}
			wantStandardHeaders(t, log.Requests()[0], false)
		})
	}
}

func TestStaticExportJobDecoding(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       *StaticExportJob
		err        string
	}{
		{"every field", string(fixture(t, "static_export_job_running.json")), wantRunningExport, ""},
		{"failed with its reason", `{"jobId":"j","status":"failed","progress":17,"pageCount":3,"error":"domain docs.example.com is not a deployment"}`,
			&StaticExportJob{ID: "j", Status: StaticExportFailed, Progress: 17, PageCount: 3, Error: "domain docs.example.com is not a deployment"}, ""},
		{"optional fields absent", `{"jobId":"j","status":"queued"}`, &StaticExportJob{ID: "j", Status: StaticExportQueued}, ""},
		{"no jobId", `{"status":"queued"}`, nil, `required field "jobId"`},
		{"no status", `{"jobId":"j","status":null}`, nil, `required field "status"`},
		{"fractional page count", `{"jobId":"j","status":"running","pageCount":1.5}`, nil, "pageCount"},
		{"bad timestamp", `{"jobId":"j","status":"running","updatedAt":"now"}`, nil, "updatedAt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			serve(t, mt, on(http.MethodGet, exportJobPath, replyJSON(http.StatusOK, tt.body)))
			got, err := c.StaticExports.Get(t.Context(), exportJobID)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "static export job") {
					t.Errorf("err = %v, want one about %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("job (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStaticExportBundle(t *testing.T) {
	c, mt := newTestClient(t)
	log := serve(t, mt, on(http.MethodPost, exportJobPath+"/bundle", replyFixture(t, http.StatusOK, "static_export_bundle.json")))
	// The bundle's host is routed too, so that a request to it would be
	// counted rather than fail in some other way.
	var bundleHits int
	mt.RegisterResponder(http.MethodGet, "=~^https://bundles\\.example-storage\\.test/", func(req *http.Request) (*http.Response, error) {
		bundleHits++
		return replyAs(http.StatusOK, "application/gzip", "")(req)
	})
	got, err := c.StaticExports.Bundle(t.Context(), exportJobID)
	if err != nil {
		t.Fatal(err)
	}
	want := &StaticExportBundle{JobID: exportJobID, URL: exportBundleURL, SizeBytes: 18432000,
		ExpiresAt: time.Date(2026, 8, 14, 10, 22, 30, 0, time.UTC)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundle (-want +got):\n%s", diff)
	}
	reqs := log.Requests()
	if len(reqs) != 1 || bundleHits != 0 {
		t.Fatalf("%d requests to the API and %d to the bundle's host; want one to the API alone", len(reqs), bundleHits)
	}
	wantStandardHeaders(t, reqs[0], false)
	if reqs[0].Body != "" {
		t.Errorf("body %q, want none", reqs[0].Body)
	}
}

func TestStaticExportBundleErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		reply    func() (int, string)
		sentinel error
		message  string
	}{
		{"not completed", func() (int, string) {
			return http.StatusConflict, `{"error":"The job has not finished yet"}`
		}, ErrConflict, "The job has not finished yet"},
		{"no such job", func() (int, string) {
			return http.StatusNotFound, `{"error":"No job exists with the provided ID."}`
		}, ErrNotFound, "No job exists with the provided ID."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := newTestClient(t)
			status, body := tt.reply()
			serve(t, mt, on(http.MethodPost, exportJobPath+"/bundle", replyJSON(status, body)))
			_, err := c.StaticExports.Bundle(t.Context(), exportJobID)
			if !errors.Is(err, tt.sentinel) || asAPIError(t, err).Message != tt.message {
				t.Errorf("err = %v, want %v with message %q", err, tt.sentinel, tt.message)
			}
		})
	}
	c, mt := newTestClient(t)
	serve(t, mt, on(http.MethodPost, exportJobPath+"/bundle", replyJSON(http.StatusOK, `{"jobId":"`+exportJobID+`","sizeBytes":0}`)))
	if _, err := c.StaticExports.Bundle(t.Context(), exportJobID); err == nil || !strings.Contains(err.Error(), `"bundleUrl"`) {
		t.Errorf("a bundle without its link: err = %v, want the missing bundleUrl named", err)
	}
}

func TestStaticExportErrorsCarryTheServiceMessage(t *testing.T) {
	for _, tt := range []struct {
		status   int
		body     string
		sentinel error
	}{
		{http.StatusBadRequest, `{"error":"domain is not a reachable hostname"}`, ErrBadRequest},
		{http.StatusUnauthorized, `{"error":"Authentication failed."}`, ErrUnauthorized},
		{http.StatusForbidden, `{"error":"Static export is not enabled for this organization."}`, ErrForbidden},
	} {
		c, mt := newTestClient(t)
		serve(t, mt, on(http.MethodPost, "/v1/static-export/jobs", replyJSON(tt.status, tt.body)))
		_, err := c.StaticExports.Start(t.Context(), StaticExportParams{Domain: "docs.example.com"})
		apiErr := asAPIError(t, err)
		if !errors.Is(err, tt.sentinel) || !strings.Contains(tt.body, `"`+apiErr.Message+`"`) || apiErr.Message == "" {
			t.Errorf("%d: err = %v, want %v with the body's message", tt.status, err, tt.sentinel)
		}
	}
}

func TestStaticExportRefusesBadJobIDs(t *testing.T) {
	for _, id := range []string{"", ".", "..", "j "} {
		c, mt := newTestClient(t)
		wantRejected(t, mt, errOf(c.StaticExports.Get(t.Context(), id)), "jobID")
		wantRejected(t, mt, errOf(c.StaticExports.Bundle(t.Context(), id)), "jobID")
		wantRejected(t, mt, errOf(c.StaticExports.Wait(t.Context(), id, StaticExportWaitParams{})), "jobID")
	}
}
