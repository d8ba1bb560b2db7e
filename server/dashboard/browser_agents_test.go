package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docsapi/docsapi-go/server/internal/servertest"
	"github.com/docsapi/docsapi-go/server/store"
)

// agentsSent are the user agents the test's views come from, each with
// the views it sends a day and the path it reads most.
var agentsSent = []struct {
	ua, path string
	perDay   int
}{
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", "/guide/install", 9},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)", "/reference/api", 6},
	{"Mozilla/5.0 (compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)", "/guide/install", 2},
	{"Mozilla/5.0 (Macintosh) AppleWebKit/537.36 Cursor/0.48.6 Chrome/132.0 Electron/34.3.4 Safari/537.36", "/reference/api", 4},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "/guide/configure", 12},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "/guide/install", 7},
	{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "/guide/install", 5},
	{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "/blog/launch", 3},
	{"curl/8.7.1", "/llms.txt", 1},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "/guide/install", 20},
}

// ingestAgents sends two weeks of the agents' views through the ingestion
// endpoint, each day's count varying with the day.
func (d *dashEnv) ingestAgents(t *testing.T, today time.Time) {
	t.Helper()
	for day := range 14 {
		var views []string
		for i, a := range agentsSent {
			n := a.perDay + (day*(i+3))%5
			at := today.AddDate(0, 0, -day).Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
			views = append(views, fmt.Sprintf(`{"path":%q,"userAgent":%q,"at":%q,"count":%d}`, a.path, a.ua, at, n))
			if i%3 == 0 {
				views = append(views, fmt.Sprintf(`{"path":"/reference/api","userAgent":%q,"at":%q}`, a.ua, at))
			}
		}
		if resp, body := d.Do("rw", "POST", "/v1/analytics/alpha/views", `{"views":[`+strings.Join(views, ",")+`]}`); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("ingest: %d %s", resp.StatusCode, body)
		}
	}
}

// wantAgentTables checks the page's tables of AI agents, crawlers, days
// and top pages against the store's answers over [from, to) for path.
func wantAgentTables(t *testing.T, b *servertest.Tab, st store.Store, from, to time.Time, path string) {
	t.Helper()
	q := store.AgentsQuery{ProjectID: "alpha", From: from, To: to, Path: path, Limit: 20}
	res, err := st.QueryAgents(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var ai, crawlers [][]string
	var aiViews, crawlerViews int64
	for _, a := range res.Totals {
		if a.Class == store.AgentAI {
			aiViews += a.Views
		} else {
			crawlerViews += a.Views
		}
	}
	for _, a := range res.Totals {
		if a.Class == store.AgentAI {
			ai = append(ai, []string{a.Name, count(a.Views), share(a.Views, aiViews)})
		} else {
			crawlers = append(crawlers, []string{a.Name, kind(a.Class), count(a.Views), share(a.Views, crawlerViews)})
		}
	}
	if len(ai) == 0 || len(crawlers) == 0 {
		t.Fatalf("the store holds %d AI agents and %d crawlers: nothing to check", len(ai), len(crawlers))
	}
	for sel, want := range map[string][][]string{"#ai-agents": ai, "#crawlers": crawlers} {
		if got := b.Rows(sel); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s shows %q, the store says %q", sel, got, want)
		}
	}
	if got := b.Text("#total-agents-ai"); got != count(aiViews) {
		t.Errorf("AI agent views show %s, the store says %d", got, aiViews)
	}
	if got := b.Text("#total-crawlers"); got != count(crawlerViews) {
		t.Errorf("crawler views show %s, the store says %d", got, crawlerViews)
	}
	var pages [][]string
	for _, r := range res.Rows {
		pages = append(pages, []string{r.Path, r.Name, kind(r.Class), count(r.Views)})
	}
	if got := b.Rows("#agent-pages"); fmt.Sprint(got) != fmt.Sprint(pages) {
		t.Errorf("#agent-pages shows %q, the store says %q", got, pages)
	}
	// The days' table adds up to the agents' totals, class by class, one
	// row a day.
	series, err := st.AgentSeries(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	perDay := map[string][4]int64{}
	for _, p := range series {
		v := perDay[p.Day.Format(time.DateOnly)]
		v[map[store.AgentClass]int{store.AgentAI: 0, store.AgentSearchBot: 1, store.AgentTrainingBot: 2, store.AgentOtherBot: 3}[p.Class]] += p.Views
		perDay[p.Day.Format(time.DateOnly)] = v
	}
	rows := b.Rows("#agents-days")
	if want := int(to.Sub(from) / (24 * time.Hour)); len(rows) != want {
		t.Fatalf("the days' table has %d rows for %d days", len(rows), want)
	}
	for _, row := range rows {
		v := perDay[row[0]]
		if want := []string{row[0], count(v[0]), count(v[1]), count(v[2]), count(v[3])}; fmt.Sprint(row) != fmt.Sprint(want) {
			t.Errorf("day %s shows %q, the store says %q", row[0], row, want)
		}
	}
}

// kind is the page's name of a crawler's class.
func kind(c store.AgentClass) string {
	return map[store.AgentClass]string{store.AgentAI: "AI agent", store.AgentSearchBot: "search crawler", store.AgentTrainingBot: "training crawler", store.AgentOtherBot: "other bot"}[c]
}

// share is the page's share of part in whole.
func share(part, whole int64) string {
	return fmt.Sprintf("%.1f %%", float64(part)*100/float64(whole))
}

func TestAgentsPageInBrowser(t *testing.T) {
	browser := servertest.FindBrowser(t)
	d := newDashEnv(t)
	today := d.Clock.Now().UTC().Truncate(24 * time.Hour)
	d.ingestAgents(t, today)

	b := servertest.NewTab(t, browser, d.url)
	signIn(b, d.Keys["ro"], "#views-chart")
	b.Do("opening AI & crawlers from the navigation",
		chromedp.Click(chromedp.CSS(`nav a[href$="/projects/alpha/agents"]`)), chromedp.WaitVisible(chromedp.ID("ai-agents")))
	if got := b.Text(`nav a[aria-current="page"]`); got != "AI & crawlers" {
		t.Errorf("the navigation's current entry is %q", got)
	}
	from, to := today.AddDate(0, 0, -29), today.AddDate(0, 0, 1)
	wantAgentTables(t, b, d.Store, from, to, "")
	if n := servertest.Eval[int](b, `document.querySelectorAll('.multiple svg').length`); n != 4 {
		t.Errorf("%d small charts, want one per kind", n)
	}
	b.ScreenshotBoth("agents")

	// A page's own agents, from the top pages' link.
	href := servertest.Eval[string](b, `Array.from(document.querySelectorAll('#agent-pages th a')).find(a => a.textContent === '/reference/api')?.getAttribute('href') ?? ''`)
	if href == "" {
		t.Fatal("no link to /reference/api's agents among the top pages")
	}
	b.Do("opening a page's agents",
		chromedp.Click(chromedp.CSS(`#agent-pages a[href="`+href+`"]`)),
		chromedp.WaitVisible(chromedp.ID("all-pages")))
	if got := b.Text("h1"); got != "AI & crawlers of /reference/api" {
		t.Errorf("the heading says %q", got)
	}
	wantAgentTables(t, b, d.Store, from, to, "/reference/api")
	b.ScreenshotBoth("agents-page")

	// A week, through the range form, of every page again.
	weekFrom := today.AddDate(0, 0, -6).Format(time.DateOnly)
	b.Open("/dashboard/projects/alpha/agents", "#ai-agents")
	b.Do("picking a week",
		chromedp.SetValue(chromedp.ID("from"), weekFrom),
		chromedp.Click(chromedp.ID("show-range")),
		chromedp.WaitVisible(chromedp.CSS(`input#from[value="`+weekFrom+`"]`)))
	wantAgentTables(t, b, d.Store, today.AddDate(0, 0, -6), to, "")

	// A preset, clicked: the last 7 days, against the 7 before.
	b.Do("picking 7 days", chromedp.Click(chromedp.ID("period-7d")), chromedp.WaitVisible(chromedp.CSS(`#period-7d[aria-current="page"]`)))
	weekStart := today.AddDate(0, 0, -6)
	wantAgentTables(t, b, d.Store, weekStart, to, "")
	totals := func(from, to time.Time) (ai, crawlers int64) {
		res, err := d.Store.QueryAgents(context.Background(), store.AgentsQuery{ProjectID: "alpha", From: from, To: to, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Totals {
			if a.Class == store.AgentAI {
				ai += a.Views
			} else {
				crawlers += a.Views
			}
		}
		return ai, crawlers
	}
	ai, crawlers := totals(weekStart, to)
	prevAI, prevCrawlers := totals(today.AddDate(0, 0, -13), weekStart)
	if prevAI == 0 || prevAI == ai {
		t.Fatalf("the store has %d AI agent views in the week before and %d in the last: nothing to compare", prevAI, ai)
	}
	for sel, want := range map[string]string{
		"#change-agents-ai": wantChange(ai, prevAI, "previous 7 days"),
		"#change-crawlers":  wantChange(crawlers, prevCrawlers, "previous 7 days"),
	} {
		if got := b.Text(sel); got != want {
			t.Errorf("7 days: %s says %q, the store %q", sel, got, want)
		}
	}
	// On a phone, the small charts' labels keep a legible size.
	b.Do("a phone's screen", chromedp.EmulateViewport(servertest.PhoneWidth, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	checkChartLabels(b, ".multiple svg", 2, "7 days on a phone")
	b.Do("a desktop's screen", chromedp.EmulateViewport(servertest.DesktopWidth, 900))
	checkChartLabels(b, ".multiple svg", 2, "7 days on a desktop")
	b.ScreenshotBoth("agents-7-days")

	// The navigation keeps the period: the searches of the same 7 days,
	// and back.
	b.Do("opening the searches", chromedp.Click(chromedp.CSS(`nav a[href*="/searches"]`)), chromedp.WaitVisible(chromedp.ID("top-searches")))
	if !b.Present(`#period-7d[aria-current="page"]`) {
		t.Error("the searches opened from the navigation lost the period of 7 days")
	}
	b.Do("back to the agents", chromedp.Click(chromedp.CSS(`nav a[href*="/agents"]`)), chromedp.WaitVisible(chromedp.ID("ai-agents")))
	if !b.Present(`#period-7d[aria-current="page"]`) {
		t.Error("the agents opened from the navigation lost the period of 7 days")
	}

	// Twelve months, per month, their labels with the year, on a phone.
	b.Do("picking 12 months", chromedp.Click(chromedp.ID("period-12m")), chromedp.WaitVisible(chromedp.CSS(`#period-12m[aria-current="page"]`)))
	if got := servertest.Eval[[]string](b, `Array.from(document.querySelectorAll('#chart-ai text.axis')).map(t => t.textContent)`); strings.Join(got, "|") != today.AddDate(0, -11, 0).Format("Jan 2006")+"|"+today.Format("Jan 2006") {
		t.Errorf("12 months: the AI chart's labels are %q", got)
	}
	b.Do("a phone's screen", chromedp.EmulateViewport(servertest.PhoneWidth, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	checkChartLabels(b, ".multiple svg", 2, "12 months on a phone")
	b.Do("a desktop's screen", chromedp.EmulateViewport(servertest.DesktopWidth, 900))

	// A path that is no path says so.
	b.Open("/dashboard/projects/alpha/agents?path="+url.QueryEscape("no-slash"), "#range-problem")
	if got := b.Text("#range-problem"); !strings.Contains(got, "path") {
		t.Errorf("the problem says %q", got)
	}
}
