package traffic_test

import (
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

func TestDefaultTable(t *testing.T) {
	c := traffic.Default()
	if c.Version() < 1 {
		t.Errorf("Version() = %d, want a positive version", c.Version())
	}
	rules := c.Rules()
	if len(rules) < 50 {
		t.Fatalf("default table has %d rules; it should cover the crawlers the package documents", len(rules))
	}
	seenToken := map[string]int{}
	seenFeature := map[traffic.Feature]int{}
	for i, r := range rules {
		if r.Source == "" {
			t.Errorf("rule %d (%q %v) has no source", i, r.Token, r.Feature)
		}
		if r.Token != "" {
			key := strings.ToLower(r.Token)
			if j, dup := seenToken[key]; dup {
				t.Errorf("rule %d repeats token %q of rule %d; the later one can never match", i, r.Token, j)
			}
			seenToken[key] = i
		} else {
			if j, dup := seenFeature[r.Feature]; dup {
				t.Errorf("rule %d repeats feature %v of rule %d", i, r.Feature, j)
			}
			seenFeature[r.Feature] = i
		}
	}
	for _, f := range []traffic.Feature{traffic.MarkdownPath, traffic.LLMsTxt, traffic.AcceptMarkdown, traffic.EmptyUserAgent} {
		if _, ok := seenFeature[f]; !ok {
			t.Errorf("default table has no rule for feature %v", f)
		}
	}
	if again := traffic.Default(); again != c {
		t.Error("Default() built a second classifier; it should parse the table once")
	}
}

// TestDefaultTableContract checks every name the contract classifies.
func TestDefaultTableContract(t *testing.T) {
	want := map[string]traffic.Class{
		"ChatGPT-User": traffic.AI, "Claude-User": traffic.AI, "claude-code": traffic.AI,
		"Cursor": traffic.AI, "Perplexity-User": traffic.AI,
		"Googlebot": traffic.SearchBot, "bingbot": traffic.SearchBot,
		"OAI-SearchBot": traffic.SearchBot, "PerplexityBot": traffic.SearchBot,
		"GPTBot": traffic.TrainingBot, "ClaudeBot": traffic.TrainingBot, "CCBot": traffic.TrainingBot,
		"Google-Extended": traffic.TrainingBot, "Amazonbot": traffic.TrainingBot,
		"AhrefsBot": traffic.OtherBot, "SemrushBot": traffic.OtherBot, "HeadlessChrome": traffic.OtherBot,
	}
	c := traffic.Default()
	for tok, class := range want {
		if got := c.Classify("Mozilla/5.0 (compatible; "+tok+"/1.0)", "/", "*/*"); got != class {
			t.Errorf("%s: got %v, want %v", tok, got, class)
		}
	}
}

// TestEveryTokenRuleMatches checks that each token rule of the default
// table wins for a user agent that carries its token, in its own, upper and
// lower case: no rule is dead and none is shadowed.
func TestEveryTokenRuleMatches(t *testing.T) {
	c := traffic.Default()
	for i, r := range c.Rules() {
		if r.Token == "" {
			continue
		}
		for _, tok := range []string{r.Token, strings.ToUpper(r.Token), strings.ToLower(r.Token)} {
			ua := "Mozilla/5.0 (compatible; " + tok + "/1.0; +https://example.com)"
			if got := c.Classify(ua, "/", "*/*"); got != r.Class {
				t.Errorf("rule %d: Classify(%q) = %v, want %v", i, ua, got, r.Class)
			}
		}
	}
}

// TestDefaultTableOrder checks the grouping the precedence depends on:
// agents before crawlers, named crawlers before the Markdown features,
// generic tools after them, the empty user agent last.
func TestDefaultTableOrder(t *testing.T) {
	rules := traffic.Default().Rules()
	index := func(tok string) int {
		for i, r := range rules {
			if strings.EqualFold(r.Token, tok) {
				return i
			}
		}
		t.Fatalf("no rule for %q", tok)
		return -1
	}
	lastAgent, firstCrawler, lastCrawler := -1, len(rules), -1
	feature := map[traffic.Feature]int{}
	for i, r := range rules {
		switch {
		case r.Feature != traffic.NoFeature:
			feature[r.Feature] = i
		case r.Class == traffic.AI:
			lastAgent = i
		case r.Class == traffic.SearchBot || r.Class == traffic.TrainingBot:
			firstCrawler = min(firstCrawler, i)
			lastCrawler = i
		}
	}
	if lastAgent > firstCrawler {
		t.Errorf("an agent rule (%d) comes after a crawler rule (%d)", lastAgent, firstCrawler)
	}
	for _, f := range []traffic.Feature{traffic.MarkdownPath, traffic.LLMsTxt, traffic.AcceptMarkdown} {
		if feature[f] < lastCrawler || feature[f] < index("AhrefsBot") {
			t.Errorf("feature %v (%d) comes before a named crawler", f, feature[f])
		}
		for _, tool := range []string{"curl", "HeadlessChrome", "python-requests", "Go-http-client"} {
			if feature[f] > index(tool) {
				t.Errorf("feature %v (%d) comes after %s (%d)", f, feature[f], tool, index(tool))
			}
		}
	}
	if feature[traffic.EmptyUserAgent] != len(rules)-1 {
		t.Errorf("empty-user-agent is rule %d, want the last (%d)", feature[traffic.EmptyUserAgent], len(rules)-1)
	}
}

func TestNewRefusesInvalidRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule traffic.Rule
		want []string // substrings of the error
	}{
		{"empty token", traffic.Rule{Class: traffic.AI}, []string{"rule 1", "empty"}},
		{"unknown class", traffic.Rule{Token: "Foo", Class: traffic.Class(9)}, []string{"rule 1", `"Foo"`, "class"}},
		{"space in token", traffic.Rule{Token: "Foo Bar", Class: traffic.AI}, []string{"rule 1", `"Foo Bar"`, "' '"}},
		{"slash in token", traffic.Rule{Token: "Foo/1.0", Class: traffic.AI}, []string{"rule 1", `"Foo/1.0"`, "'/'"}},
		{"non-ascii token", traffic.Rule{Token: "Bötchen", Class: traffic.AI}, []string{"rule 1", "Bötchen"}},
		{"token and feature", traffic.Rule{Token: "Foo", Feature: traffic.MarkdownPath, Class: traffic.AI}, []string{"rule 1", `"Foo"`, "both"}},
		{"unknown feature", traffic.Rule{Feature: traffic.Feature(42), Class: traffic.AI}, []string{"rule 1", "feature"}},
	} {
		rules := []traffic.Rule{{Token: "Ok", Class: traffic.OtherBot}, tc.rule}
		c, err := traffic.New(rules)
		if err == nil {
			t.Errorf("%s: New accepted %+v", tc.name, tc.rule)
			continue
		}
		if c != nil {
			t.Errorf("%s: New returned a classifier with its error", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", tc.name, err, w)
			}
		}
	}
}

func TestNew(t *testing.T) {
	c, err := traffic.New([]traffic.Rule{
		{Token: "Fetcher", Class: traffic.AI},
		{Token: "FETCHER", Class: traffic.OtherBot}, // same token: the first rule wins
		{Feature: traffic.LLMsTxt, Class: traffic.SearchBot},
		{Token: "Crawler", Class: traffic.TrainingBot},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Version() != 0 {
		t.Errorf("Version() = %d, want 0 for a table built by New", c.Version())
	}
	for _, tc := range []struct {
		ua, path string
		want     traffic.Class
	}{
		{"fetcher/1", "/", traffic.AI},
		{"Crawler", "/", traffic.TrainingBot},
		{"Crawler", "/llms.txt", traffic.SearchBot}, // the feature rule comes first
		{"fetcher Crawler", "/llms.txt", traffic.AI},
		{uaChrome, "/", traffic.Human},
		{"", "/", traffic.Human},           // no empty-user-agent rule in this table
		{uaChrome, "/a.md", traffic.Human}, // nor a markdown-path rule
		{"curl/8.0", "/", traffic.Human},   // nor the default table's tokens
	} {
		if got := c.Classify(tc.ua, tc.path, ""); got != tc.want {
			t.Errorf("Classify(%q, %q) = %v, want %v", tc.ua, tc.path, got, tc.want)
		}
	}

	empty, err := traffic.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Classify(uaCurl, "/llms.txt", "text/markdown"); got != traffic.Human {
		t.Errorf("empty table: got %v, want human for everything", got)
	}
}

func TestNewCopiesRules(t *testing.T) {
	rules := []traffic.Rule{{Token: "Fetcher", Class: traffic.AI}}
	c, err := traffic.New(rules)
	if err != nil {
		t.Fatal(err)
	}
	rules[0].Class = traffic.OtherBot
	if got := c.Rules()[0].Class; got != traffic.AI {
		t.Errorf("changing the caller's slice changed the classifier's rule to %v", got)
	}
	c.Rules()[0].Class = traffic.OtherBot
	if got := c.Classify("Fetcher", "/", ""); got != traffic.AI {
		t.Errorf("changing the slice Rules returned changed classification to %v", got)
	}
}

func TestWith(t *testing.T) {
	base := traffic.Default()
	const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	const monitor = "Mozilla/5.0 (compatible; UptimeMonitor/2.0)"

	c, err := base.With(
		traffic.Rule{Token: "Googlebot", Class: traffic.Human, Source: "test"},
		traffic.Rule{Token: "UptimeMonitor", Class: traffic.OtherBot, Source: "test"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify(googlebot, "/", ""); got != traffic.Human {
		t.Errorf("extended: Googlebot = %v, want the extra rule's human", got)
	}
	if got := c.Classify(monitor, "/", ""); got != traffic.OtherBot {
		t.Errorf("extended: monitor = %v, want other-bot", got)
	}
	if got := c.Classify(uaAgent, "/", ""); got != traffic.AI {
		t.Errorf("extended: the default rules are gone: Claude-User = %v", got)
	}
	if got := base.Classify(googlebot, "/", ""); got != traffic.SearchBot {
		t.Errorf("With changed its receiver: Googlebot = %v", got)
	}
	if got := base.Classify(monitor, "/", ""); got != traffic.Human {
		t.Errorf("With changed its receiver: monitor = %v", got)
	}
	if c.Version() != base.Version() {
		t.Errorf("Version() = %d, want the base table's %d", c.Version(), base.Version())
	}
	if got, want := len(c.Rules()), len(base.Rules())+2; got != want {
		t.Errorf("extended table has %d rules, want %d", got, want)
	}
	if r := c.Rules()[0]; r.Token != "Googlebot" {
		t.Errorf("first rule is %+v, want the first extra rule", r)
	}

	// An extra feature rule placed first overrides the table's order too.
	strict, err := base.With(traffic.Rule{Feature: traffic.MarkdownPath, Class: traffic.OtherBot, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strict.Classify(uaAgent, "/a.md", ""); got != traffic.OtherBot {
		t.Errorf("extra markdown-path rule first: got %v, want other-bot", got)
	}

	if _, err := base.With(traffic.Rule{Token: "bad token", Class: traffic.AI}); err == nil {
		t.Error("With accepted an invalid rule")
	} else if !strings.Contains(err.Error(), "rule 0") {
		t.Errorf("error %q does not name the extra rule's index", err)
	}
}

func TestParse(t *testing.T) {
	c, err := traffic.Parse([]byte(`{"version": 7, "rules": [
		{"token": "Fetcher", "class": "ai", "source": "test"},
		{"feature": "empty-user-agent", "class": "other-bot", "source": "test"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Version() != 7 {
		t.Errorf("Version() = %d, want 7", c.Version())
	}
	if got := c.Classify("Fetcher/1.0", "/", ""); got != traffic.AI {
		t.Errorf("Fetcher = %v, want ai", got)
	}
	if got := c.Classify("", "/", ""); got != traffic.OtherBot {
		t.Errorf("empty = %v, want other-bot", got)
	}

	for _, tc := range []struct {
		name, data, want string
	}{
		{"not json", `rules`, "parsing"},
		{"no version", `{"rules": []}`, "version"},
		{"zero version", `{"version": 0, "rules": []}`, "version"},
		{"unknown field", `{"version": 1, "rules": [{"token": "A", "class": "ai", "klass": "x"}]}`, "klass"},
		{"missing class", `{"version": 1, "rules": [{"token": "A"}]}`, `rule 0 (token "A")`},
		{"unknown class", `{"version": 1, "rules": [{"token": "A", "class": "robot"}]}`, "robot"},
		{"unknown feature", `{"version": 1, "rules": [{"feature": "html-path", "class": "ai"}]}`, "html-path"},
		{"invalid token", `{"version": 1, "rules": [{"token": "A B", "class": "ai"}]}`, `"A B"`},
		{"trailing data", `{"version": 1, "rules": []} {}`, "after"},
	} {
		_, err := traffic.Parse([]byte(tc.data))
		if err == nil {
			t.Errorf("%s: Parse accepted %s", tc.name, tc.data)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not mention %s", tc.name, err, tc.want)
		}
	}
}

// TestLongTokens covers rule tokens of 63 bytes and more, whose lengths
// share one bit of the length filter: the full comparison must still
// tell them apart.
func TestLongTokens(t *testing.T) {
	long := "Agent-" + strings.Repeat("x", 70) + "-end"
	c, err := traffic.New([]traffic.Rule{{Token: long, Class: traffic.AI}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ua   string
		want traffic.Class
	}{
		{long + "/1.0", traffic.AI},
		{"Mozilla/5.0 (" + strings.ToUpper(long) + ")", traffic.AI},
		{"Agent-" + strings.Repeat("x", 71) + "-end", traffic.Human},
		{"Agent-" + strings.Repeat("y", 70) + "-end", traffic.Human},
		{"Agent-" + strings.Repeat("x", 60) + "-end", traffic.Human},
	} {
		if got := c.Classify(tc.ua, "/", ""); got != tc.want {
			t.Errorf("Classify(%.20q...) = %v, want %v", tc.ua, got, tc.want)
		}
	}
}

// TestConcurrentUse runs the shared default classifier from several
// goroutines; under -race it checks that classifying mutates nothing.
func TestConcurrentUse(t *testing.T) {
	c := traffic.Default()
	done := make(chan bool)
	for range 4 {
		go func() {
			ok := true
			for _, tc := range userAgents {
				ok = ok && c.Classify(tc.ua, "/quickstart", browserAccept) == tc.want
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("a concurrent Classify returned a different class")
		}
	}
}
