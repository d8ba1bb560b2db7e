package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// The period the analytics pages share (the overview, AI & crawlers,
// searches, conversations): the same parameters, presets, form and problems on each, and
// the navigation that keeps it from one to the next.

// analyticsPages are the pages that take the period, by their paths
// under alpha's.
var analyticsPages = []string{"/", "/agents", "/searches", "/conversations"}

var navLink = regexp.MustCompile(`<li><a href="([^"]*)"[^>]*>([^<]*)</a></li>`)

// navLinks returns the navigation's links of a page by their text.
func navLinks(t *testing.T, page string) map[string]string {
	t.Helper()
	nav := between(t, page, `<nav aria-label="Sections">`, "</nav>")
	links := map[string]string{}
	for _, m := range navLink.FindAllStringSubmatch(nav, -1) {
		links[html.UnescapeString(m[2])] = html.UnescapeString(m[1])
	}
	if len(links) != 7 {
		t.Fatalf("the navigation has %d links: %q", len(links), links)
	}
	return links
}

// hiddenFields returns the hidden fields of the custom range's form.
func hiddenFields(t *testing.T, page string) map[string]string {
	t.Helper()
	form := between(t, page, `id="range-form">`, "</form>")
	fields := map[string]string{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`).FindAllStringSubmatch(form, -1) {
		fields[m[1]] = html.UnescapeString(m[2])
	}
	return fields
}

// currentPreset returns the presets the picker marks as current.
func currentPreset(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`id="period-([a-z0-9]+)" href="[^"]*" aria-current="page"`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// inputValue returns the value a page's input of the given id holds.
func inputValue(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + id + `" name="[^"]*" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page has no input #%s", id)
	}
	return html.UnescapeString(m[1])
}

func TestDashboardPeriodIsSharedByTheAnalyticsPages(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("ro")
	const project = "/dashboard/projects/alpha"
	for _, section := range analyticsPages {
		// A preset: its days, its comparison, its links.
		page, _ := b.page(project + section + "?period=7d")
		if got := currentPreset(page); fmt.Sprint(got) != "[7d]" {
			t.Errorf("%s?period=7d: the current presets are %q", section, got)
		}
		if from, to := inputValue(t, page, "from"), inputValue(t, page, "to"); from != "2026-08-08" || to != "2026-08-14" {
			t.Errorf("%s?period=7d: the form shows %s to %s", section, from, to)
		}
		if got := textOf(t, page, `id="compare-note">`, "</p>"); got != "Each change compares with the previous 7 days, 2026-08-01 to 2026-08-07." {
			t.Errorf("%s?period=7d: the note says %q", section, got)
		}
		for _, p := range []string{"today", "7d", "30d", "mtd", "12m"} {
			if got := hrefOf(t, page, "period-"+p); got != project+section+"?period="+p {
				t.Errorf("%s: the preset %s links to %q", section, p, got)
			}
		}
		if got := hrefOf(t, page, "period-custom"); got != project+section+"?from=2026-08-08&period=custom&to=2026-08-14" {
			t.Errorf("%s: the custom preset links to %q", section, got)
		}
		if got := between(t, page, `<form class="range" method="get" action="`, `"`); got != project+section {
			t.Errorf("%s: the custom form sends to %q", section, got)
		}
		// The navigation keeps the period to the analytics pages alone.
		wantNav := map[string]string{
			"Overview": project + "/?period=7d", "AI & crawlers": project + "/agents?period=7d", "Searches": project + "/searches?period=7d",
			"Conversations": project + "/conversations?period=7d", "Content gaps": project + "/gaps?period=7d", "Feedback": project + "/feedback", "Jobs": project + "/jobs",
		}
		if got := navLinks(t, page); fmt.Sprint(got) != fmt.Sprint(wantNav) {
			t.Errorf("%s?period=7d: the navigation is %q, want %q", section, got, wantNav)
		}

		// A custom range, through the form's fields.
		page, _ = b.page(project + section + "?" + url.Values{"period": {"custom"}, "from": {"2026-08-01"}, "to": {"2026-08-10"}}.Encode())
		if got := currentPreset(page); fmt.Sprint(got) != "[custom]" {
			t.Errorf("%s custom: the current presets are %q", section, got)
		}
		if from, to := inputValue(t, page, "from"), inputValue(t, page, "to"); from != "2026-08-01" || to != "2026-08-10" {
			t.Errorf("%s custom: the form shows %s to %s", section, from, to)
		}
		if got := textOf(t, page, `id="compare-note">`, "</p>"); got != "Each change compares with the previous 10 days, 2026-07-22 to 2026-07-31." {
			t.Errorf("%s custom: the note says %q", section, got)
		}
		if got := navLinks(t, page)["Searches"]; got != project+"/searches?from=2026-08-01&period=custom&to=2026-08-10" {
			t.Errorf("%s custom: the navigation's Searches is %q", section, got)
		}
		if got := hiddenFields(t, page); fmt.Sprint(got) != "map[period:custom]" {
			t.Errorf("%s: the form's hidden fields are %q", section, got)
		}

		// The default period needs no parameter.
		page, _ = b.page(project + section)
		if got := currentPreset(page); fmt.Sprint(got) != "[30d]" || navLinks(t, page)["AI & crawlers"] != project+"/agents" {
			t.Errorf("%s: without a period, the current preset is %q and the navigation links to %q", section, got, navLinks(t, page)["AI & crawlers"])
		}
	}
}

func TestDashboardPeriodProblemsAreTheSameOnEachPage(t *testing.T) {
	d := newDashEnv(t)
	b := d.browser(t)
	b.signIn("ro")
	long := int(time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC).Sub(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) / (24 * time.Hour))
	for q, want := range map[string]string{
		"period=8d":                     `period must be one of today, 7d, 30d, mtd, 12m, custom, got "8d"`,
		"period=7d&from=2026-08-01":     "from and to go with period=custom, not with period=7d",
		"period=custom&to=yesterday":    `to must be a day such as 2026-08-14, got "yesterday"`,
		"from=2026-08-10&to=2026-08-01": "from (2026-08-10) is after to (2026-08-01)",
		"from=2020-01-01&to=2026-08-01": fmt.Sprintf("the range holds %d days; the dashboard shows at most 1000", long),
	} {
		for _, section := range analyticsPages {
			resp, page := b.get("/dashboard/projects/alpha" + section + "?" + q)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s?%s: %d, want 400", section, q, resp.StatusCode)
				continue
			}
			if got := textOf(t, page, `id="range-problem">`, "</p>"); got != want {
				t.Errorf("%s?%s: the page says %q, want %q", section, q, got, want)
			}
			// Above the default period's numbers.
			if got, from := currentPreset(page), inputValue(t, page, "from"); fmt.Sprint(got) != "[30d]" || from != "2026-07-16" {
				t.Errorf("%s?%s: the page shows %q from %s, not the default period", section, q, got, from)
			}
		}
	}
}

// A page's other parameters (path) stay in the presets' links and the
// custom form, and the links to a page keep the period.
func TestDashboardPeriodKeepsThePath(t *testing.T) {
	d := newDashEnv(t)
	d.addViews(t, store.ViewCount{Path: "/guide", Hour: d.dayOf(-1), AI: 3, Bot: 2, Agents: []store.AgentCount{
		{Name: "ChatGPT-User", Class: store.AgentAI, Views: 3}, {Name: "GPTBot", Class: store.AgentTrainingBot, Views: 2}}})
	b := d.browser(t)
	b.signIn("ro")
	for _, section := range []string{"/", "/agents"} {
		page, _ := b.page("/dashboard/projects/alpha" + section + "?period=mtd&path=%2Fguide")
		if got := hrefOf(t, page, "period-12m"); got != "/dashboard/projects/alpha"+section+"?path=%2Fguide&period=12m" {
			t.Errorf("%s: the preset 12m of /guide links to %q", section, got)
		}
		if got := hiddenFields(t, page); fmt.Sprint(got) != "map[path:/guide period:custom]" {
			t.Errorf("%s: the custom form of /guide sends %q", section, got)
		}
		if got := hrefOf(t, page, "all-pages"); got != "/dashboard/projects/alpha"+section+"?period=mtd" {
			t.Errorf("%s: every page's link is %q", section, got)
		}
		if got := navLinks(t, page)["Overview"]; got != "/dashboard/projects/alpha/?period=mtd" {
			t.Errorf("%s: the navigation's overview of /guide is %q: a page's path is its own", section, got)
		}
	}
	// The agents' page form asks for the same period.
	page, _ := b.page("/dashboard/projects/alpha/agents?period=mtd")
	form := between(t, page, `id="path-form">`, "</form>")
	if !strings.Contains(form, `<input type="hidden" name="period" value="mtd">`) {
		t.Errorf("the agents' page form does not keep the period:\n%s", form)
	}
	if rows := tableRows(t, page, `id="agent-pages"`); len(rows) != 2 {
		t.Fatalf("the agents' top pages: %q", rows)
	}
	if got := regexp.MustCompile(`<th scope="row" class="path"><a href="([^"]*)">/guide</a>`).FindStringSubmatch(page); got == nil || html.UnescapeString(got[1]) != "/dashboard/projects/alpha/agents?path=%2Fguide&period=mtd" {
		t.Errorf("the agents' link to /guide: %q", got)
	}
}

// agentDay stores views of agents on a day: per name, its views.
func (d *dashEnv) agentDay(t *testing.T, day time.Time, views map[string]int64) {
	t.Helper()
	classes := map[string]store.AgentClass{"ChatGPT-User": store.AgentAI, "Claude-User": store.AgentAI, "GPTBot": store.AgentTrainingBot, "Googlebot": store.AgentSearchBot, "curl": store.AgentOtherBot}
	c := store.ViewCount{Path: "/guide", Hour: day.Add(9 * time.Hour)}
	for name, n := range views {
		class := classes[name]
		c.Agents = append(c.Agents, store.AgentCount{Name: name, Class: class, Views: n})
		if class == store.AgentAI {
			c.AI += n
		} else {
			c.Bot += n
		}
	}
	d.addViews(t, c)
}

func TestDashboardAgentsComparesWithThePreviousPeriod(t *testing.T) {
	d := newDashEnv(t)
	d.agentDay(t, d.dayOf(0), map[string]int64{"ChatGPT-User": 12, "Claude-User": 3, "GPTBot": 40, "Googlebot": 5})
	d.agentDay(t, d.dayOf(-3), map[string]int64{"ChatGPT-User": 8})
	d.agentDay(t, d.dayOf(-9), map[string]int64{"ChatGPT-User": 10, "GPTBot": 50}) // the previous 7 days
	d.agentDay(t, d.dayOf(-20), map[string]int64{"curl": 1000})                    // before them
	b := d.browser(t)
	b.signIn("ro")
	const vs = "previous 7 days"
	page, _ := b.page("/dashboard/projects/alpha/agents?period=7d")
	for id, want := range map[string]string{
		"total-agents-ai": "23", "change-agents-ai": "+130% vs " + vs,
		"total-crawlers": "45", "change-crawlers": "\u221210% vs " + vs,
		"count-ai-agents": "2", "change-ai-agents": "+1 vs " + vs,
		"count-crawlers": "2", "change-count-crawlers": "+1 vs " + vs,
	} {
		if got := textOf(t, page, `id="`+id+`">`, "</dd>"); got != want {
			t.Errorf("#%s says %q, want %q", id, got, want)
		}
	}
	// Today alone, against yesterday, which had none; charted per day.
	page, _ = b.page("/dashboard/projects/alpha/agents?period=today")
	if got := textOf(t, page, `id="change-agents-ai">`, "</dd>"); got != "new (none in the previous day)" {
		t.Errorf("today's AI agents: %q", got)
	}
	if rows := tableRows(t, page, `id="agents-days"`); len(rows) != 1 || fmt.Sprint(rows[0]) != "[2026-08-14 15 5 40 0]" {
		t.Errorf("today's bars: %q", rows)
	}
	if got := textOf(t, page, `<h2 id="agents-days-heading">`, "</h2>"); got != "Views per day, by kind" {
		t.Errorf("today is charted as %q", got)
	}
	// A month without agents after one without.
	page, _ = b.page("/dashboard/projects/alpha/agents?period=custom&from=2026-06-01&to=2026-06-30")
	if got := textOf(t, page, `id="change-count-crawlers">`, "</dd>"); got != "no change vs previous 30 days" {
		t.Errorf("a month without agents after one without: %q", got)
	}
}

func TestDashboardAgentsChartsFollowTheRange(t *testing.T) {
	d := newDashEnv(t)
	// A day's views every 5 days over 430 days: weeks and months of
	// several days each, across the new year.
	for n := 0; n < 430; n += 5 {
		d.agentDay(t, d.dayOf(-n), map[string]int64{"ChatGPT-User": int64(n%7 + 1), "Googlebot": int64(n%3 + 2), "curl": 1})
	}
	b := d.browser(t)
	b.signIn("ro")
	for _, tc := range []struct {
		query, per  string
		rows        int
		first, last string // the first and last rows' times
		axis        string // the charts' labels
	}{
		{"period=7d", "day", 7, "2026-08-08", "2026-08-14", "8 Aug|14 Aug"},
		{"period=custom&from=2026-03-01&to=2026-06-30", "week", 19, "2026-03-01 to 2026-03-01", "2026-06-29 to 2026-06-30", "1 Mar|29 Jun"},
		{"period=12m", "month", 12, "2025-09-01 to 2025-09-30", "2026-08-01 to 2026-08-14", "Sep 2025|Aug 2026"},
		{"period=custom&from=2025-12-20&to=2026-01-10", "day", 22, "2025-12-20", "2026-01-10", "20 Dec 2025|10 Jan 2026"},
	} {
		page, _ := b.page("/dashboard/projects/alpha/agents?" + tc.query)
		if got := textOf(t, page, `<h2 id="agents-days-heading">`, "</h2>"); got != "Views per "+tc.per+", by kind" {
			t.Errorf("%s: %q", tc.query, got)
		}
		rows := tableRows(t, page, `id="agents-days"`)
		if len(rows) != tc.rows || rows[0][0] != tc.first || rows[len(rows)-1][0] != tc.last {
			t.Errorf("%s: %d rows from %q to %q, want %d from %q to %q", tc.query, len(rows), rows[0][0], rows[len(rows)-1][0], tc.rows, tc.first, tc.last)
			continue
		}
		// Each row is the store's days in it, added up per class.
		span := regexp.MustCompile(`^(\d{4}-\d\d-\d\d)(?: to (\d{4}-\d\d-\d\d))?$`)
		for _, row := range rows {
			m := span.FindStringSubmatch(row[0])
			if m == nil {
				t.Fatalf("%s: a row of %q", tc.query, row[0])
			}
			from, _ := time.Parse(time.DateOnly, m[1])
			to := from
			if m[2] != "" {
				to, _ = time.Parse(time.DateOnly, m[2])
			}
			series, err := d.Store.AgentSeries(context.Background(), store.AgentsQuery{ProjectID: "alpha", From: from, To: to.AddDate(0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			var want [4]int64
			for _, p := range series {
				want[map[store.AgentClass]int{store.AgentAI: 0, store.AgentSearchBot: 1, store.AgentTrainingBot: 2, store.AgentOtherBot: 3}[p.Class]] += p.Views
			}
			if got := fmt.Sprint(row[1:]); got != fmt.Sprint([]string{count(want[0]), count(want[1]), count(want[2]), count(want[3])}) {
				t.Errorf("%s: the row %s shows %s, the store says %v", tc.query, row[0], got, want)
			}
		}
		labels := regexp.MustCompile(`(?s)id="chart-ai">.*?</svg>`).FindString(page)
		var axis []string
		for _, m := range regexp.MustCompile(`<text class="axis"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(labels, -1) {
			axis = append(axis, m[1])
		}
		if got := strings.Join(axis, "|"); got != tc.axis {
			t.Errorf("%s: the AI chart's labels are %q, want %q", tc.query, got, tc.axis)
		}
		if regexp.MustCompile(`<svg[^>]*viewBox[^>]*id="chart-`).MatchString(page) {
			t.Errorf("%s: the charts have a viewBox, which shrinks their text on a phone", tc.query)
		}
	}
}

func TestDashboardSearchesComparesWithThePreviousPeriod(t *testing.T) {
	d := newDashEnv(t)
	today := d.dayOf(0)
	d.addSearches(t, today, "install", 9, 6, "/guide/install")
	d.addSearches(t, today.AddDate(0, 0, -3), "sso", 3, 0, "")
	d.addSearches(t, today.AddDate(0, 0, -8), "install", 8, 2, "/guide/install") // the previous 7 days
	d.addSearches(t, today.AddDate(0, 0, -20), "old", 50, 0, "")
	b := d.browser(t)
	b.signIn("ro")
	for q, want := range map[string][2]string{
		"period=7d":    {"12", "+50% vs previous 7 days"},
		"period=today": {"9", "new (none in the previous day)"},
		"period=30d":   {"70", "new (none in the previous 30 days)"},
		"period=custom&from=2026-07-01&to=2026-07-02": {"0", "no change vs previous 2 days"},
	} {
		page, _ := b.page("/dashboard/projects/alpha/searches?" + q)
		if got := [2]string{textOf(t, page, `id="total-searches">`, "</dd>"), textOf(t, page, `id="change-searches">`, "</dd>")}; got != want {
			t.Errorf("?%s: the searches' card says %q, want %q", q, got, want)
		}
	}
}
