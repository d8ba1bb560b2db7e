package traffic_test

import (
	"net/http/httptest"
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

func TestMarkdownPath(t *testing.T) {
	c := traffic.Default()
	for _, tc := range []struct {
		path string
		want traffic.Class
	}{
		{"/quickstart.md", traffic.AI},
		{"/docs/api/overview.md", traffic.AI},
		{"/quickstart.MD", traffic.AI},
		{"/quickstart.md?utm_source=x", traffic.AI},
		{"/quickstart.md#install", traffic.AI},
		{"/quickstart", traffic.Human},
		{"/quickstart.mdx", traffic.Human}, // the source format, not a Markdown request
		{"/quickstart.md/", traffic.Human},
		{"/.md", traffic.Human}, // no file name before the extension
		{"/md", traffic.Human},
		{"/page?file=a.md", traffic.Human}, // only the path counts
		{"", traffic.Human},
	} {
		if got := c.Classify(uaChrome, tc.path, browserAccept); got != tc.want {
			t.Errorf("Classify(chrome, %q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestLLMsTxt(t *testing.T) {
	c := traffic.Default()
	for _, tc := range []struct {
		path string
		want traffic.Class
	}{
		{"/llms.txt", traffic.AI},
		{"/llms-full.txt", traffic.AI},
		{"/docs/llms.txt", traffic.AI}, // documentation served under a base path
		{"/LLMS.TXT", traffic.AI},
		{"/llms.txt?v=2", traffic.AI},
		{"/llms.txt.bak", traffic.Human},
		{"/notllms.txt", traffic.Human},
		{"/llms.txt/more", traffic.Human},
		{"/llms", traffic.Human},
		{"/robots.txt", traffic.Human},
	} {
		if got := c.Classify(uaChrome, tc.path, browserAccept); got != tc.want {
			t.Errorf("Classify(chrome, %q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestAcceptMarkdown(t *testing.T) {
	c := traffic.Default()
	for _, tc := range []struct {
		accept string
		want   traffic.Class
	}{
		{"text/markdown", traffic.AI},
		{"TEXT/Markdown", traffic.AI},
		{"text/x-markdown", traffic.AI},
		{"text/html;q=0.9, text/markdown", traffic.AI},                                    // Markdown outranks HTML
		{"text/html, text/markdown", traffic.AI},                                          // a tie goes to Markdown
		{" text/markdown ; q=0.9 , text/html ; q=0.9", traffic.AI},                        // tie, with optional white space
		{"text/markdown;q=0.5, text/html", traffic.Human},                                 // HTML outranks Markdown
		{"text/markdown; charset=utf-8; q=0.8, text/html;q=0.7", traffic.AI},              // other parameters ignored
		{"text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1", traffic.AI}, // OpenCode's header
		{"text/markdown, text/html, */*", traffic.AI},                                     // Claude Code's axios-era header
		{"text/markdown;q=0", traffic.Human},                                              // q=0 means "not acceptable"
		{"text/markdown;q=0.001", traffic.AI},
		{"text/markdown;q=1.000", traffic.AI},
		{"text/markdown;q=1.5", traffic.Human},                                    // malformed q: element ignored
		{"text/markdown;q=abc", traffic.Human},                                    // malformed q: element ignored
		{"text/markdown;q=0.1234", traffic.Human},                                 // more than three decimals is malformed
		{"text/markdown;q=0.5, text/markdown;q=0.9, text/html;q=0.8", traffic.AI}, // the best Markdown entry counts
		{"*/*", traffic.Human},
		{"text/*", traffic.Human},
		{"text/markdownish", traffic.Human},
		{"text/plain", traffic.Human},
		{"", traffic.Human},
		{browserAccept, traffic.Human},
	} {
		if got := c.Classify(uaChrome, "/quickstart", tc.accept); got != tc.want {
			t.Errorf("Classify(chrome, Accept %q) = %v, want %v", tc.accept, got, tc.want)
		}
	}
}

// TestMarkdownPrecedence pins the order of the default table: crawlers
// named by their operators keep their class when they fetch Markdown,
// while generic tools, unknown clients and the empty user agent fetching
// Markdown are AI.
func TestMarkdownPrecedence(t *testing.T) {
	const (
		googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
		gptbot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot"
		ahrefs    = "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"
		headless  = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36"
		chatgpt   = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
		unknown   = "docs-fetcher/0.1"
	)
	c := traffic.Default()
	for _, tc := range []struct {
		name, ua, path, accept string
		want                   traffic.Class
	}{
		{"search crawler fetching .md", googlebot, "/quickstart.md", "*/*", traffic.SearchBot},
		{"training crawler fetching llms.txt", gptbot, "/llms.txt", "*/*", traffic.TrainingBot},
		{"seo crawler asking for markdown", ahrefs, "/quickstart", "text/markdown", traffic.OtherBot},
		{"agent fetching .md", chatgpt, "/quickstart.md", "*/*", traffic.AI},
		{"curl fetching .md", uaCurl, "/quickstart.md", "*/*", traffic.AI},
		{"curl fetching llms-full.txt", uaCurl, "/llms-full.txt", "*/*", traffic.AI},
		{"curl fetching a page", uaCurl, "/quickstart", "*/*", traffic.OtherBot},
		{"axios asking for markdown", "axios/1.8.4", "/quickstart", "text/markdown, text/html, */*", traffic.AI},
		{"headless chrome asking for markdown", headless, "/quickstart", "text/markdown", traffic.AI},
		{"headless chrome fetching a page", headless, "/quickstart", browserAccept, traffic.OtherBot},
		{"unknown client fetching .md", unknown, "/quickstart.md", "*/*", traffic.AI},
		{"unknown client fetching a page", unknown, "/quickstart", "*/*", traffic.Human},
		{"empty user agent fetching .md", "", "/quickstart.md", "", traffic.AI},
		{"empty user agent asking for markdown", "", "/quickstart", "text/markdown", traffic.AI},
		{"empty user agent fetching a page", "", "/quickstart", "", traffic.OtherBot},
	} {
		if got := c.Classify(tc.ua, tc.path, tc.accept); got != tc.want {
			t.Errorf("%s: Classify(%q, %q, %q) = %v, want %v", tc.name, tc.ua, tc.path, tc.accept, got, tc.want)
		}
	}
}

func TestClassifyRequest(t *testing.T) {
	c := traffic.Default()
	for _, tc := range []struct {
		name    string
		target  string
		headers map[string][]string
		want    traffic.Class
	}{
		{"browser", "/quickstart", map[string][]string{"User-Agent": {uaChrome}, "Accept": {browserAccept}}, traffic.Human},
		{"crawler", "/quickstart", map[string][]string{"User-Agent": {"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"}}, traffic.SearchBot},
		{"markdown path with a query", "/quickstart.md?ref=x", map[string][]string{"User-Agent": {uaChrome}}, traffic.AI},
		{"escaped markdown path", "/quick%20start.md", map[string][]string{"User-Agent": {uaChrome}}, traffic.AI},
		{"llms.txt", "/llms.txt", map[string][]string{"User-Agent": {uaChrome}}, traffic.AI},
		{"accept split over two lines", "/quickstart", map[string][]string{"User-Agent": {uaChrome}, "Accept": {"text/html;q=0.9", "text/markdown"}}, traffic.AI},
		{"html wins across two lines", "/quickstart", map[string][]string{"User-Agent": {uaChrome}, "Accept": {"text/markdown;q=0.5", "text/html"}}, traffic.Human},
		{"no user agent", "/quickstart", nil, traffic.OtherBot},
		{"first user agent line counts", "/quickstart", map[string][]string{"User-Agent": {uaChrome, uaCurl}}, traffic.Human},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		r.Header.Del("User-Agent")
		for k, vs := range tc.headers {
			for _, v := range vs {
				r.Header.Add(k, v)
			}
		}
		if got := c.ClassifyRequest(r); got != tc.want {
			t.Errorf("%s: ClassifyRequest = %v, want %v", tc.name, got, tc.want)
		}
	}
}
