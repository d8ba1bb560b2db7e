package traffic_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

// ClassifyAgent names the rule that decided: the token as rules.json
// writes it, whatever case the user agent uses, a readable name for a
// feature, and no name for a human; the Memo names alike.
func TestClassifyAgentNamesTheDecidingRule(t *testing.T) {
	c := traffic.Default()
	m := traffic.NewMemo(c)
	for _, tc := range []struct {
		ua, path, accept string
		class            traffic.Class
		name             string
	}{
		{uaChrome, "/guide", browserAccept, traffic.Human, ""},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ChatGPT-User/1.0; +https://openai.com/bot)", "/guide", "*/*", traffic.AI, "ChatGPT-User"},
		{uaAgent, "/guide", "*/*", traffic.AI, "Claude-User"},
		{"Mozilla/5.0 (compatible; perplexity-user/1.0)", "/guide", "*/*", traffic.AI, "Perplexity-User"},
		{"Mozilla/5.0 (Macintosh) AppleWebKit/537.36 Cursor/0.48.6 Chrome/132.0 Electron/34.3.4 Safari/537.36", "/guide", "*/*", traffic.AI, "Cursor"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "/guide", "*/*", traffic.TrainingBot, "GPTBot"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "/guide", "*/*", traffic.TrainingBot, "ClaudeBot"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "/guide", "*/*", traffic.SearchBot, "Googlebot"},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "/guide", "*/*", traffic.SearchBot, "bingbot"},
		{uaCurl, "/guide", "*/*", traffic.OtherBot, "curl"},
		// A known crawler keeps its name on Markdown; curl fetching
		// Markdown is decided by the feature, which names it.
		{"GPTBot/1.2", "/guide.md", "*/*", traffic.TrainingBot, "GPTBot"},
		{uaCurl, "/guide.md", "*/*", traffic.AI, "Markdown (.md URL)"},
		{uaCurl, "/docs/llms-full.txt", "*/*", traffic.AI, "llms.txt"},
		{uaChrome, "/guide", "text/markdown, text/html;q=0.5", traffic.AI, "Markdown (Accept header)"},
		{"", "/guide", "", traffic.OtherBot, "no user agent"},
		{"", "/llms.txt", "", traffic.AI, "llms.txt"},
	} {
		class, name := c.ClassifyAgent(tc.ua, tc.path, tc.accept)
		if class != tc.class || name != tc.name {
			t.Errorf("ClassifyAgent(%q, %q, %q) = %v, %q; want %v, %q", tc.ua, tc.path, tc.accept, class, name, tc.class, tc.name)
		}
		if got := c.Classify(tc.ua, tc.path, tc.accept); got != class {
			t.Errorf("Classify(%q) = %v, but ClassifyAgent says %v", tc.ua, got, class)
		}
		for range 2 { // cold, then remembered
			if mc, mn := m.ClassifyAgent(tc.ua, tc.path, tc.accept); mc != class || mn != name {
				t.Errorf("Memo.ClassifyAgent(%q) = %v, %q; the classifier says %v, %q", tc.ua, mc, mn, class, name)
			}
		}
	}
}

// Every user agent of the classifier's own tests gets a name of Agents()
// with the class it is classified in, or no name as a human.
func TestAgentsListsEveryName(t *testing.T) {
	c := traffic.Default()
	known := map[traffic.Agent]bool{}
	for _, a := range c.Agents() {
		if known[a] {
			t.Errorf("Agents() lists %+v twice", a)
		}
		known[a] = true
	}
	// One name per live rule of the embedded table, none of them empty.
	if got, want := len(known), len(c.Rules()); got != want {
		t.Errorf("Agents() has %d names; the table has %d rules", got, want)
	}
	for _, u := range userAgents {
		class, name := c.ClassifyAgent(u.ua, "/guide", browserAccept)
		if class == traffic.Human {
			if name != "" {
				t.Errorf("%s: a human named %q", u.name, name)
			}
			continue
		}
		if !known[traffic.Agent{Name: name, Class: class}] {
			t.Errorf("%s: named %q (%v), which Agents() does not list", u.name, name, class)
		}
	}
}

// Names come from the rule table only: operator rules added with With
// are named by their tokens, a shadowed rule gives no name, a human rule
// gives none, and a token past MaxNameBytes is named OtherAgent.
func TestAgentNamesOfOperatorRules(t *testing.T) {
	long := "Monitor-" + strings.Repeat("x", traffic.MaxNameBytes)
	c, err := traffic.Default().With(
		traffic.Rule{Token: "AcmeMonitor", Class: traffic.OtherBot, Source: "test"},
		traffic.Rule{Token: "gptbot", Class: traffic.SearchBot, Source: "test"},
		traffic.Rule{Token: "FriendlyBrowser", Class: traffic.Human, Source: "test"},
		traffic.Rule{Token: long, Class: traffic.AI, Source: "test"},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ua    string
		class traffic.Class
		name  string
	}{
		{"AcmeMonitor/2.0", traffic.OtherBot, "AcmeMonitor"},
		{"GPTBot/1.2", traffic.SearchBot, "gptbot"},
		{"FriendlyBrowser/1.0 curl/8.0", traffic.Human, ""},
		{long + "/1.0", traffic.AI, traffic.OtherAgent},
	} {
		if class, name := c.ClassifyAgent(tc.ua, "/", "*/*"); class != tc.class || name != tc.name {
			t.Errorf("ClassifyAgent(%q) = %v, %q; want %v, %q", tc.ua, class, name, tc.class, tc.name)
		}
	}
	for _, a := range c.Agents() {
		if a.Name == "GPTBot" || a.Name == "FriendlyBrowser" || a.Name == "" {
			t.Errorf("Agents() lists %+v, which no request can be named", a)
		}
	}
}

// A flood of 100,000 made-up user agents, some embedding real tokens,
// others long or only separators, is named with at most the table's
// names: nothing of a user agent becomes a name.
func TestAgentNamesAreBoundedUnderAFlood(t *testing.T) {
	c := traffic.Default()
	m := traffic.NewMemo(c)
	known := map[traffic.Agent]bool{}
	for _, a := range c.Agents() {
		known[a] = true
	}
	seen := map[traffic.Agent]bool{}
	tokens := []string{"GPTBot", "Claude-User", "curl", "bot", "Agent", "ChatGPT", "Googlebot-Imagex"}
	for i := range 100_000 {
		ua := fmt.Sprintf("Mozilla/5.0 (compatible; %s-%d/1.%d; +https://example.com/%d)", tokens[i%len(tokens)], i, i%7, i)
		switch i % 5 {
		case 1:
			ua = fmt.Sprintf("%s/%d", tokens[i%len(tokens)], i)
		case 2:
			ua = strings.Repeat("x", traffic.MaxUserAgentScan-3) + fmt.Sprintf(" GPTBot/%d", i)
		case 3:
			ua = fmt.Sprintf("agent%d %s", i, strings.Repeat(";", i%9))
		}
		path, accept := "/guide", "*/*"
		if i%11 == 0 {
			path = "/guide.md"
		}
		for _, classify := range []func(string, string, string) (traffic.Class, string){c.ClassifyAgent, m.ClassifyAgent} {
			class, name := classify(ua, path, accept)
			if class == traffic.Human {
				if name != "" {
					t.Fatalf("%q: a human named %q", ua, name)
				}
				continue
			}
			a := traffic.Agent{Name: name, Class: class}
			if !known[a] {
				t.Fatalf("%q: named %+v, not a name of the table", ua, a)
			}
			seen[a] = true
		}
	}
	if len(seen) > len(known) {
		t.Fatalf("%d names from the flood, more than the table's %d", len(seen), len(known))
	}
	// The flood did reach named rules: the bound is not met by naming
	// nothing.
	for _, want := range []string{"GPTBot", "Claude-User", "curl", "Markdown (.md URL)"} {
		found := false
		for a := range seen {
			found = found || a.Name == want
		}
		if !found {
			t.Errorf("no request of the flood was named %q", want)
		}
	}
}
