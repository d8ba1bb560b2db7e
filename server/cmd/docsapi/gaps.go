package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	docsapi "github.com/docsapi/docsapi-go"
	"github.com/docsapi/docsapi-go/server/internal/wire"
)

const gapsHelp = `

Content gaps are a self-hosted addition (GET /v1/gaps/{projectId}); the SDK
has no method for them, so the command calls the endpoint itself, with the
same key, server and project as the other client commands.` + clientHelp

func gapsListCommand() *command {
	return &command{
		name:    "gaps list",
		summary: "list what readers looked for and did not find, per page or topic",
		help: `Lists a project's content gaps over a range of UTC days (by default the 30
days up to today): the questions the assistant could not answer, the searches
after which no result was opened, and the pages voted down, grouped per page
or topic, the most pressing group first. Each gap shows the jobs made from it
and, once one completed, whether retrieval now finds a section for it.
A table, or the API's answer with --json.` + gapsHelp,
		examples: `docsapi gaps list --project handbook
docsapi gaps list --from 2026-08-01 --to 2026-08-31 --json | jq '.groups[0]'`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			var rf gapsRangeFlags
			rf.register(fs)
			limit := fs.Int("limit", 50, "at most `N` groups, 1 to 200")
			asJSON := fs.Bool("json", false, "print the API's answer as JSON")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				if *limit < 1 || *limit > 200 {
					return usagef("--limit %d: must be 1 to 200", *limit)
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				q := rf.query()
				q.Set("limit", fmt.Sprint(*limit))
				var rep wire.GapsReport
				body, err := c.selfHosted(ctx, http.MethodGet, "/v1/gaps/"+url.PathEscape(c.project), q, nil, "", &rep)
				if err != nil {
					return c.explain(err)
				}
				if *asJSON {
					_, err := s.stdout.Write(append(bytes.TrimSpace(body), '\n'))
					return err
				}
				return printGaps(s.stdout, rep)
			}
		},
	}
}

func gapsJobCommand() *command {
	return &command{
		name:    "gaps job",
		summary: "make an agent job from a selection of content gaps",
		help: `Makes an agent job from the gaps --select names, as KIND:KEY (KIND is
question, search or page; KEY is the gap's key as 'gaps list' prints it),
looked up in the same range as 'gaps list' reads. The job's prompt quotes the
gaps as readers' data, after --instructions; the gaps list the job from then
on. Needs a key with the write scope. Prints the job as JSON, as 'jobs
create' does; follow it with 'docsapi jobs wait ID'.` + gapsHelp,
		examples: `docsapi gaps job --select "question:how do i rotate keys?" --select page:/guides/keys
docsapi gaps job --select "search:webhook retries" --instructions "Add a section on retries" --idempotency-key "$RUN_ID"`,
		setup: func(fs *flag.FlagSet) runFunc {
			var cf clientFlags
			cf.register(fs)
			var rf gapsRangeFlags
			rf.register(fs)
			var selected listOfFlag
			fs.Var(&selected, "select", "a gap as `KIND:KEY` (question, search or page); repeat for each")
			instructions := fs.String("instructions", "", "`TEXT` the job's prompt gives the agent before the gaps")
			idem := fs.String("idempotency-key", "", "`KEY` that makes retrying this request safe: the same key and selection\ngive the same job")
			return func(ctx context.Context, s *stdio, args []string) error {
				if err := wantArgs(args); err != nil {
					return err
				}
				type ref struct {
					Kind string `json:"kind"`
					Key  string `json:"key"`
				}
				body := struct {
					Gaps         []ref  `json:"gaps"`
					Instructions string `json:"instructions,omitempty"`
				}{Instructions: *instructions}
				for _, v := range selected {
					kind, key, ok := strings.Cut(v, ":")
					if !ok || key == "" || (kind != "question" && kind != "search" && kind != "page") {
						return usagef("--select %q: want KIND:KEY, KIND one of question, search, page", v)
					}
					body.Gaps = append(body.Gaps, ref{Kind: kind, Key: key})
				}
				if len(body.Gaps) == 0 {
					return usagef("select at least one gap with --select KIND:KEY ('docsapi gaps list' lists them)")
				}
				c, err := cf.client(s)
				if err != nil {
					return err
				}
				b, _ := json.Marshal(body)
				var job wire.Job
				out, err := c.selfHosted(ctx, http.MethodPost, "/v1/gaps/"+url.PathEscape(c.project)+"/job", rf.query(), b, *idem, &job)
				if err != nil {
					return c.explain(err)
				}
				_, err = s.stdout.Write(append(bytes.TrimSpace(out), '\n'))
				return err
			}
		},
	}
}

// listOfFlag is a flag given once per value (a value may hold commas).
type listOfFlag []string

func (l *listOfFlag) String() string     { return strings.Join(*l, " ") }
func (l *listOfFlag) Set(v string) error { *l = append(*l, v); return nil }

// gapsRangeFlags are the range of days both gaps commands read.
type gapsRangeFlags struct{ from, to string }

func (f *gapsRangeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.from, "from", "", "first `DAY` (YYYY-MM-DD, UTC); default 30 days before --to")
	fs.StringVar(&f.to, "to", "", "last `DAY` (YYYY-MM-DD, UTC), included; default today")
}

// query is the range as the endpoint's dateFrom and dateTo: --to's day is
// included, so dateTo is the midnight after it.
func (f *gapsRangeFlags) query() url.Values {
	q := url.Values{}
	if f.from != "" {
		q.Set("dateFrom", f.from)
	}
	if f.to != "" {
		if d, err := time.Parse(time.DateOnly, f.to); err == nil {
			q.Set("dateTo", d.AddDate(0, 0, 1).Format(time.DateOnly))
		} else {
			q.Set("dateTo", f.to) // the server says what is wrong with it
		}
	}
	return q
}

// maxGapsBody bounds an answer of the gaps endpoints.
const maxGapsBody = 32 << 20

// selfHosted makes a request to a self-hosted endpoint with the client's
// key, decodes a 2xx answer's JSON into v and returns its body; another
// status is a *docsapi.APIError, as the SDK's methods return, so that
// explain gives the same advice.
func (c *apiClient) selfHosted(ctx context.Context, method, path string, q url.Values, body []byte, idempotencyKey string, v any) ([]byte, error) {
	u := strings.TrimRight(c.baseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+*c.key)
	req.Header.Set("User-Agent", "docsapi-cli/"+cliVersion())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxGapsBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		ae := &docsapi.APIError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id"), Method: method, Path: path, Body: string(out)}
		var e struct {
			Error   string                `json:"error"`
			Details []docsapi.ErrorDetail `json:"details"`
		}
		if json.Unmarshal(out, &e) == nil {
			ae.Message, ae.Details = e.Error, e.Details
		}
		return nil, ae
	}
	if err := json.Unmarshal(out, v); err != nil {
		return nil, errors.New("the server's answer is not the gaps endpoint's JSON: is --base-url a self-hosted server?")
	}
	return out, nil
}

// printGaps writes a report as a table: a line per gap under its group's.
func printGaps(w io.Writer, rep wire.GapsReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "From %s to %s", rep.DateFrom[:10], rep.DateTo[:10])
	if rep.Truncated {
		fmt.Fprint(tw, " (truncated: more was recorded than one look reads)")
	}
	fmt.Fprintln(tw)
	if len(rep.Groups) == 0 {
		fmt.Fprintln(tw, "No gaps: readers found what they looked for.")
		return tw.Flush()
	}
	fmt.Fprintln(tw, "GROUP\tKIND\tKEY\tCOUNT\tLAST SEEN\tJOBS\tRETRIEVAL")
	for _, g := range rep.Groups {
		name := "topic " + strings.ToValidUTF8(deref(g.Topic), "?")
		if g.Page != nil {
			name = "page " + *g.Page
		}
		fmt.Fprintf(tw, "%s (score %d)\t\t\t\t\t\t\n", oneLineText(name), g.Score)
		for _, gap := range g.Gaps {
			var jobs []string
			for _, j := range gap.Jobs {
				jobs = append(jobs, j.ID+" "+j.Status)
			}
			retrieval := "-"
			if r := gap.Retrieval; r != nil {
				retrieval = "not found"
				if r.Found {
					retrieval = "found " + deref(r.Path)
					if r.Anchor != nil {
						retrieval += "#" + *r.Anchor
					}
				}
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%d\t%s\t%s\t%s\n", gap.Kind, oneLineText(gap.Key), gap.Count,
				dashIfNil(gap.LastSeen), dashIfEmpty(strings.Join(jobs, ", ")), retrieval)
		}
	}
	return tw.Flush()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func dashIfNil(s *string) string { return dashIfEmpty(deref(s)) }

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLineText keeps a reader's text on one line of the table, without
// tabs or terminal escapes.
func oneLineText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
