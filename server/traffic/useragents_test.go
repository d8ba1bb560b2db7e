package traffic_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

// browserAccept is what Chrome sends for a page navigation; it keeps the
// Markdown rules out of the user-agent tests.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"

// Benchmark and allocation inputs, shared so that the zero-allocation test
// covers exactly what the benchmarks measure.
const (
	uaChrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	// uaLong is Facebook's in-app browser on iOS, one of the longest user
	// agents real people send.
	uaLong  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.38.109;FBBV/614826562;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/616253429;IABMV/1]"
	uaAgent = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)"
	uaCurl  = "curl/8.7.1"
)

// userAgents are real user agents, as sent, with the class the default
// table must give them for an ordinary page request.
var userAgents = []struct {
	name string
	ua   string
	want traffic.Class
}{
	// Browsers, desktop and mobile.
	{"chrome windows", uaChrome, traffic.Human},
	{"chrome macos", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", traffic.Human},
	{"chrome linux", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", traffic.Human},
	{"chrome chromeos", "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", traffic.Human},
	{"chrome android", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", traffic.Human},
	{"chrome ios", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", traffic.Human},
	{"firefox windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", traffic.Human},
	{"firefox macos", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0", traffic.Human},
	{"firefox linux", "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", traffic.Human},
	{"firefox android", "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0", traffic.Human},
	{"firefox ios", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15", traffic.Human},
	{"safari macos", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", traffic.Human},
	{"safari iphone", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", traffic.Human},
	{"safari ipad", "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1", traffic.Human},
	{"edge windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", traffic.Human},
	{"edge macos", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", traffic.Human},
	{"edge android", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.0.0", traffic.Human},
	{"samsung internet", "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S928B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36", traffic.Human},
	{"opera windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0", traffic.Human},
	{"opera android", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36 OPR/86.0.0.0", traffic.Human},
	{"opera mini", "Opera/9.80 (Android; Opera Mini/36.2.2254/119.132; U; id) Presto/2.12.423 Version/12.16", traffic.Human},
	{"vivaldi", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Vivaldi/7.0.3495.18", traffic.Human},
	{"huawei browser", "Mozilla/5.0 (Linux; Android 10; HarmonyOS; ELS-NX9; HMSCore 6.13.0.302) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.5735.196 HuaweiBrowser/15.0.4.312 Mobile Safari/537.36", traffic.Human},
	{"internet explorer 11", "Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko", traffic.Human},
	{"facebook in-app ios", uaLong, traffic.Human},
	{"instagram in-app android", "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 Instagram 357.0.0.25.101 Android (34/14; 480dpi; 1080x2106; samsung; SM-S918B; dm3q; qcom; en_US; 658271829)", traffic.Human},
	{"google app ios", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/330.0.665236494 Mobile/15E148 Safari/604.1", traffic.Human},
	// Browsers whose names share a prefix with a crawler: whole tokens only.
	{"yandex browser is not YandexBot", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 YaBrowser/24.6.0.0 Safari/537.36", traffic.Human},
	{"duckduckgo browser is not DuckDuckBot", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 DuckDuckGo/7 Safari/605.1.15", traffic.Human},
	{"vs code webview is not an agent", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Code/1.96.2 Chrome/128.0.6613.186 Electron/32.2.6 Safari/537.36", traffic.Human},

	// Agents acting for a user.
	{"chatgpt-user", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", traffic.AI},
	{"claude-user", uaAgent, traffic.AI},
	{"claude code webfetch", "Claude-User (claude-code/2.1.83; +https://support.anthropic.com/)", traffic.AI},
	{"perplexity-user", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)", traffic.AI},
	{"mistralai-user", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)", traffic.AI},
	{"google-agent", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Google-Agent; +https://developers.google.com/crawling/docs/crawlers-fetchers/google-agent) Chrome/135.0.0.0 Safari/537.36", traffic.AI},
	{"meta-externalfetcher", "meta-externalfetcher/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", traffic.AI},
	{"duckassistbot", "DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)", traffic.AI},
	// A browser user agent that also names an agent: the agent wins.
	{"cursor electron app", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Cursor/0.45.11 Chrome/128.0.6613.186 Electron/32.2.6 Safari/537.36", traffic.AI},
	{"aider scraper", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.33 Safari/537.36 Aider/0.86.1 +https://aider.chat", traffic.AI},
	{"cline", "cline/1.3.5", traffic.AI},
	{"sdk run by claude code", "databricks-sdk-go/0.60.0 go/1.24.0 os/linux agent/claude-code", traffic.AI},
	{"sdk run by windsurf", "databricks-sdk-go/0.60.0 go/1.24.0 os/darwin agent/windsurf", traffic.AI},
	{"glab run by claude code", "glab/v1.97.0 (darwin, arm64) Coding-Agent/claude-code", traffic.AI},

	// Search crawlers.
	{"googlebot desktop", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/131.0.6778.69 Safari/537.36", traffic.SearchBot},
	{"googlebot smartphone", "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", traffic.SearchBot},
	{"googlebot classic", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", traffic.SearchBot},
	{"googlebot-image", "Googlebot-Image/1.0", traffic.SearchBot},
	{"storebot-google", "Mozilla/5.0 (X11; Linux x86_64; Storebot-Google/1.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.88 Safari/537.36", traffic.SearchBot},
	{"bingbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36", traffic.SearchBot},
	{"oai-searchbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot", traffic.SearchBot},
	{"claude-searchbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)", traffic.SearchBot},
	{"perplexitybot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", traffic.SearchBot},
	{"applebot", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", traffic.SearchBot},
	{"duckduckbot", "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", traffic.SearchBot},
	{"yandexbot", "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", traffic.SearchBot},
	{"baiduspider", "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", traffic.SearchBot},

	// Training crawlers.
	{"gptbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot", traffic.TrainingBot},
	{"claudebot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", traffic.TrainingBot},
	{"ccbot", "CCBot/2.0 (https://commoncrawl.org/faq/)", traffic.TrainingBot},
	{"amazonbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36", traffic.TrainingBot},
	{"meta-externalagent", "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", traffic.TrainingBot},
	{"bytespider", "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", traffic.TrainingBot},

	// Other bots.
	{"googleother", "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; GoogleOther)", traffic.OtherBot},
	{"adsbot-google", "AdsBot-Google (+http://www.google.com/adsbot.html)", traffic.OtherBot},
	{"ahrefsbot", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", traffic.OtherBot},
	{"semrushbot", "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", traffic.OtherBot},
	{"mj12bot", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", traffic.OtherBot},
	{"dotbot", "Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)", traffic.OtherBot},
	{"facebookexternalhit", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", traffic.OtherBot},
	{"headless chrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", traffic.OtherBot},
	{"curl", uaCurl, traffic.OtherBot},
	{"wget", "Wget/1.21.4", traffic.OtherBot},
	{"python-requests", "python-requests/2.32.3", traffic.OtherBot},
	{"python-urllib", "Python-urllib/3.12", traffic.OtherBot},
	{"aiohttp", "Python/3.12 aiohttp/3.9.5", traffic.OtherBot},
	{"go http/1.1", "Go-http-client/1.1", traffic.OtherBot},
	{"go http/2", "Go-http-client/2.0", traffic.OtherBot},
	{"axios", "axios/1.8.4", traffic.OtherBot},
	{"node fetch", "node", traffic.OtherBot},

	// Case does not matter.
	{"lower-case browser, upper-case crawler", "mozilla/5.0 (compatible; GOOGLEBOT/2.1; +http://www.google.com/bot.html)", traffic.SearchBot},
	{"upper-case agent", "CLAUDE-USER (CLAUDE-CODE/2.1.83)", traffic.AI},
	{"capitalised curl", "Curl/8.0.1", traffic.OtherBot},

	// No user agent: a script, not a person (the empty-user-agent rule).
	{"empty", "", traffic.OtherBot},
	{"blank", " \t ", traffic.OtherBot},
}

func TestClassifyUserAgents(t *testing.T) {
	if len(userAgents) < 60 {
		t.Fatalf("only %d user agents in the table; the table is meant to cover at least 60", len(userAgents))
	}
	c := traffic.Default()
	for _, tc := range userAgents {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Classify(tc.ua, "/quickstart", browserAccept); got != tc.want {
				t.Errorf("Classify(%q) = %v, want %v", tc.ua, got, tc.want)
			}
		})
	}
}
