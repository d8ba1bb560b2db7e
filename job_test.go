package docsapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixtureJobID is the id every job fixture carries: the fixtures are snapshots of
// one job's life, so a poller test can serve them in sequence.
const fixtureJobID = "aj_7Hq2vX9kLm4NpR8s"

// fixtureCreatedAt is the createdAt of most fixtures, in UTC.
var fixtureCreatedAt = time.Date(2026, 8, 14, 9, 21, 7, 482_000_000, time.UTC)

// decodeJob decodes a fixture the way the client does, through json.Unmarshal.
func decodeJob(t *testing.T, name string) *Job {
	t.Helper()
	var j Job
	if err := json.Unmarshal(fixture(t, name), &j); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return &j
}

func TestJobDecodesEveryFixture(t *testing.T) {
	source := JobSource{Repository: "acme/docs", Ref: "main"}
	tests := []struct {
		file string
		want Job
	}{
		{
			// Nulls, unknown top-level fields, an unknown nested field in
			// source, nested objects and arrays, a fractional timestamp.
			file: "job_active.json",
			want: Job{ID: fixtureJobID, Status: JobStatusActive, Source: source, Model: "claude-sonnet-4-5", CreatedAt: fixtureCreatedAt},
		},
		{
			// A status the SDK does not know is kept as sent.
			file: "job_queued.json",
			want: Job{ID: fixtureJobID, Status: "queued", Source: source, Model: "claude-sonnet-4-5",
				CreatedAt: time.Date(2026, 8, 14, 9, 21, 7, 482_913_000, time.UTC)},
		},
		{
			// createdAt carries +02:00; the decoded time is the same instant in UTC.
			file: "job_completed.json",
			want: Job{ID: fixtureJobID, Status: JobStatusCompleted, Source: source, Model: "claude-sonnet-4-5",
				PRLink: "https://github.com/acme/docs/pull/118", CreatedAt: fixtureCreatedAt},
		},
		{
			// Completed without a pull request: no file changed.
			file: "job_completed_no_pr.json",
			want: Job{ID: fixtureJobID, Status: JobStatusCompleted, Source: source, Model: "claude-sonnet-4-5",
				CreatedAt: time.Date(2026, 8, 14, 9, 21, 7, 0, time.UTC)},
		},
		{
			// source.ref null, createdAt without a zone, archivedAt set.
			file: "job_archived.json",
			want: Job{ID: fixtureJobID, Status: JobStatusArchived, Source: JobSource{Repository: "acme/docs"},
				Model: "claude-sonnet-4-5", PRLink: "https://github.com/acme/docs/pull/118", CreatedAt: fixtureCreatedAt,
				ArchivedAt: time.Date(2026, 8, 20, 17, 45, 0, 0, time.UTC)},
		},
		{
			// A space between date and time, and an unknown "error" object.
			file: "job_failed.json",
			want: Job{ID: fixtureJobID, Status: JobStatusFailed, Source: JobSource{Repository: "acme/docs", Ref: "release/v2"},
				Model: "claude-sonnet-4-5", CreatedAt: fixtureCreatedAt},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := decodeJob(t, tt.file)
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("decoded job mismatch (-want +got):\n%s", diff)
			}
			// cmp compares times with Equal, which ignores the location; the
			// contract promises UTC, so check it separately.
			for field, ts := range map[string]time.Time{"CreatedAt": got.CreatedAt, "ArchivedAt": got.ArchivedAt} {
				if !ts.IsZero() && ts.Location() != time.UTC {
					t.Errorf("%s location = %v, want UTC", field, ts.Location())
				}
			}
		})
	}
}

func TestJobNullAndMissingFieldsDecodeToZeroValues(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"all null", `{"id":"j1","status":"active","source":null,"model":null,"prLink":null,"createdAt":null,"archivedAt":null}`},
		{"source with null members", `{"id":"j1","status":"active","source":{"repository":null,"ref":null}}`},
		{"fields absent", `{"id":"j1","status":"active"}`},
		{"empty timestamps", `{"id":"j1","status":"active","createdAt":"","archivedAt":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Start from a filled job: decoding must reset every field, not
			// leave stale values where the body has null.
			got := Job{ID: "old", PRLink: "stale", Source: JobSource{Repository: "r", Ref: "x"}, Model: "m",
				CreatedAt: fixtureCreatedAt, ArchivedAt: fixtureCreatedAt}
			if err := json.Unmarshal([]byte(tt.body), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(Job{ID: "j1", Status: JobStatusActive}, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobUnknownStatusIsKeptAndNotTerminal(t *testing.T) {
	j := decodeJob(t, "job_queued.json")
	if j.Status != "queued" {
		t.Fatalf("Status = %q, want %q verbatim", j.Status, "queued")
	}
	if j.Status.Known() {
		t.Error("Known() = true for an undocumented status")
	}
	if j.Status.Terminal() {
		t.Error("Terminal() = true for an undocumented status; a poller would stop too early")
	}
	// Verbatim means not normalised either: "Completed" is not "completed".
	for _, status := range []string{"Completed", "in_progress", " active"} {
		var j Job
		if err := json.Unmarshal([]byte(`{"id":"j1","status":"`+status+`"}`), &j); err != nil {
			t.Fatalf("Unmarshal status %q: %v", status, err)
		}
		if string(j.Status) != status || j.Status.Known() || j.Status.Terminal() {
			t.Errorf("status %q decoded as %q, Known %v, Terminal %v; want verbatim, unknown, not terminal",
				status, j.Status, j.Status.Known(), j.Status.Terminal())
		}
	}
}

func TestJobStatusTerminalAndKnown(t *testing.T) {
	tests := []struct {
		status   JobStatus
		terminal bool
		known    bool
	}{
		{JobStatusActive, false, true},
		{JobStatusCompleted, true, true},
		{JobStatusArchived, true, true},
		{JobStatusFailed, true, true},
		{"queued", false, false},
		{"Completed", false, false}, // statuses are case-sensitive on the wire
		{"", false, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			if got := tt.status.Terminal(); got != tt.terminal {
				t.Errorf("JobStatus(%q).Terminal() = %v, want %v", tt.status, got, tt.terminal)
			}
			if got := tt.status.Known(); got != tt.known {
				t.Errorf("JobStatus(%q).Known() = %v, want %v", tt.status, got, tt.known)
			}
		})
	}
}

func TestJobTimestampForms(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"RFC 3339 UTC", "2026-08-14T09:21:07Z", time.Date(2026, 8, 14, 9, 21, 7, 0, time.UTC)},
		{"milliseconds", "2026-08-14T09:21:07.482Z", fixtureCreatedAt},
		{"microseconds", "2026-08-14T09:21:07.482913Z", time.Date(2026, 8, 14, 9, 21, 7, 482_913_000, time.UTC)},
		{"nanoseconds", "2026-08-14T09:21:07.123456789Z", time.Date(2026, 8, 14, 9, 21, 7, 123_456_789, time.UTC)},
		{"positive offset", "2026-08-14T11:21:07.5+02:00", time.Date(2026, 8, 14, 9, 21, 7, 500_000_000, time.UTC)},
		{"negative offset crossing midnight", "2026-08-13T23:21:07-10:00", time.Date(2026, 8, 14, 9, 21, 7, 0, time.UTC)},
		{"no zone with fraction", "2026-08-14T09:21:07.482", fixtureCreatedAt},
		{"no zone", "2026-08-14T09:21:07", time.Date(2026, 8, 14, 9, 21, 7, 0, time.UTC)},
		{"space separator UTC", "2026-08-14 09:21:07.482Z", fixtureCreatedAt},
		{"space separator with offset", "2026-08-14 09:21:07+02:00", time.Date(2026, 8, 14, 7, 21, 7, 0, time.UTC)},
		{"space separator no zone", "2026-08-14 09:21:07", time.Date(2026, 8, 14, 9, 21, 7, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"id": "j1", "createdAt": tt.in, "archivedAt": tt.in})
			var j Job
			if err := json.Unmarshal(body, &j); err != nil {
				t.Fatalf("Unmarshal(%s): %v", body, err)
			}
			for field, got := range map[string]time.Time{"CreatedAt": j.CreatedAt, "ArchivedAt": j.ArchivedAt} {
				if !got.Equal(tt.want) {
					t.Errorf("%s = %v, want %v", field, got, tt.want)
				}
				if got.Location() != time.UTC {
					t.Errorf("%s location = %v, want UTC", field, got.Location())
				}
			}
		})
	}
}

// ISO 8601 also writes offsets as +hh and +hhmm, and RFC 3339 allows a
// lower-case "t" and "z". PostgreSQL prints timestamptz as
// "2026-08-14 09:21:07.482+00", the form the space-separated layouts are
// closest to. A job whose createdAt cannot be read makes every Get fail, and
// Wait then polls until its timeout.
func TestJobTimestampOtherISO8601Offsets(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-08-14 09:21:07.482+00", fixtureCreatedAt},
		{"2026-08-14T09:21:07.482+00", fixtureCreatedAt},
		{"2026-08-14T11:21:07.482+0200", fixtureCreatedAt},
		{"2026-08-14t09:21:07.482z", fixtureCreatedAt},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var j Job
			if err := json.Unmarshal([]byte(`{"id":"j1","createdAt":"`+tt.in+`"}`), &j); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !j.CreatedAt.Equal(tt.want) || j.CreatedAt.Location() != time.UTC {
				t.Errorf("CreatedAt = %v, want %v in UTC", j.CreatedAt, tt.want)
			}
		})
	}
}

func TestJobMalformedTimestampIsAnErrorNamingTheField(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"words", `{"id":"j1","createdAt":"yesterday"}`, "createdAt"},
		{"day first", `{"id":"j1","createdAt":"14/08/2026 09:21"}`, "createdAt"},
		{"month 13", `{"id":"j1","createdAt":"2026-13-01T00:00:00Z"}`, "createdAt"},
		{"number", `{"id":"j1","createdAt":1755163267}`, "createdAt"},
		{"archivedAt", `{"id":"j1","createdAt":"2026-08-14T09:21:07Z","archivedAt":"soon"}`, "archivedAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var j Job
			err := json.Unmarshal([]byte(tt.body), &j)
			if err == nil {
				t.Fatalf("Unmarshal(%s) = nil error, decoded %+v", tt.body, j)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name the field %q", err, tt.field)
			}
		})
	}
}

func TestJobMarshalWritesNullForEmptyFields(t *testing.T) {
	tests := []struct {
		name string
		job  Job
		want string
	}{
		{
			name: "active job",
			job:  Job{ID: "j1", Status: JobStatusActive, Source: JobSource{Repository: "acme/docs"}, Model: "m", CreatedAt: fixtureCreatedAt},
			want: `{"id":"j1","status":"active","source":{"repository":"acme/docs","ref":null},"model":"m",
				"prLink":null,"createdAt":"2026-08-14T09:21:07.482Z","archivedAt":null}`,
		},
		{
			// Times in another zone are written in UTC, as the contract says.
			name: "archived job in a local zone",
			job: Job{ID: "j2", Status: JobStatusArchived, Source: JobSource{Repository: "acme/docs", Ref: "main"}, Model: "m",
				PRLink:     "https://github.com/acme/docs/pull/1",
				CreatedAt:  fixtureCreatedAt.In(time.FixedZone("CEST", 2*60*60)),
				ArchivedAt: time.Date(2026, 8, 20, 19, 45, 0, 0, time.FixedZone("CEST", 2*60*60))},
			want: `{"id":"j2","status":"archived","source":{"repository":"acme/docs","ref":"main"},"model":"m",
				"prLink":"https://github.com/acme/docs/pull/1","createdAt":"2026-08-14T09:21:07.482Z",
				"archivedAt":"2026-08-20T17:45:00Z"}`,
		},
		{
			name: "zero job",
			job:  Job{},
			want: `{"id":"","status":"","source":{"repository":"","ref":null},"model":"","prLink":null,"createdAt":null,"archivedAt":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.job)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if diff := cmp.Diff(jsonValue(t, []byte(tt.want)), jsonValue(t, got)); diff != "" {
				t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobMarshalRoundTripsEveryFixture(t *testing.T) {
	for _, name := range []string{"job_active.json", "job_queued.json", "job_completed.json",
		"job_completed_no_pr.json", "job_archived.json", "job_failed.json"} {
		t.Run(name, func(t *testing.T) {
			orig := decodeJob(t, name)
			// Through a pointer too: MarshalJSON has a value receiver, and
			// both forms must use it.
			for _, v := range []any{*orig, orig} {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatalf("Marshal: %v", err)
				}
				var back Job
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatalf("Unmarshal(%s): %v", b, err)
				}
				if diff := cmp.Diff(*orig, back); diff != "" {
					t.Errorf("round trip mismatch (-want +got):\n%s\nencoded: %s", diff, b)
				}
			}
		})
	}
}
