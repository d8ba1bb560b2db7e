package traffic_test

import (
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

func TestIsTokenByte(t *testing.T) {
	for b := 0; b < 256; b++ {
		want := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '.' || b == '_' || b == '-'
		if got := traffic.IsTokenByte(byte(b)); got != want {
			t.Errorf("IsTokenByte(%q) = %v, want %v", byte(b), got, want)
		}
	}
	for _, b := range []byte("/;() ,+:@[]~!*\t\x00\x80\xff") {
		if traffic.IsTokenByte(b) {
			t.Errorf("IsTokenByte(%q) = true, want a separator", b)
		}
	}
}

// TestWholeTokens checks that a rule token matches only a whole token of
// the user agent: never a part of a longer token, whatever surrounds it.
func TestWholeTokens(t *testing.T) {
	c, err := traffic.Default().With(traffic.Rule{Token: "bot", Class: traffic.OtherBot, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ua   string
		want traffic.Class
	}{
		{"Mozilla/5.0 (compatible; Abbott Diagnostics/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; robot/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; Bots/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; +https://example.com/bot.html)", traffic.Human}, // '.' is inside tokens
		{"Mozilla/5.0 (compatible; my-bot/1.0)", traffic.Human},                    // '-' is inside tokens
		{"Mozilla/5.0 (compatible; my_bot/1.0)", traffic.Human},                    // '_' is inside tokens
		{"Mozilla/5.0 (Linux; Android 9; CUBOT_X20)", traffic.Human},
		{"Mozilla/5.0 (compatible; bot/1.0)", traffic.OtherBot},
		{"bot", traffic.OtherBot},
		{"(bot)", traffic.OtherBot},
		{"Mozilla/5.0 bot", traffic.OtherBot},
		{"x;BOT;y", traffic.OtherBot},
		{"x@bot@y", traffic.OtherBot},
	} {
		if got := c.Classify(tc.ua, "/", ""); got != tc.want {
			t.Errorf("with rule \"bot\": Classify(%q) = %v, want %v", tc.ua, got, tc.want)
		}
	}

	d := traffic.Default()
	for _, tc := range []struct {
		ua   string
		want traffic.Class
	}{
		{"Mozilla/5.0 (compatible; GPTBotanist/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; ChatGPTBot/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; Googlebot-Foo/1.0)", traffic.Human}, // variants are listed, not inferred
		{"Mozilla/5.0 (compatible; Claude-Users/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; xcurl/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; curly/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; Node.js/20)", traffic.Human},
		{"Mozilla/5.0 (compatible; Cursorial/1.0)", traffic.Human},
		{"Mozilla/5.0 (compatible; Applebot-Extended/1.0)", traffic.TrainingBot}, // a longer rule token is its own rule
		{"Mozilla/5.0 (compatible; Applebot/1.0)", traffic.SearchBot},
	} {
		if got := d.Classify(tc.ua, "/", ""); got != tc.want {
			t.Errorf("Classify(%q) = %v, want %v", tc.ua, got, tc.want)
		}
	}
}

// TestFirstMatchWins checks that the table order decides between tokens
// of one user agent, wherever they stand in it.
func TestFirstMatchWins(t *testing.T) {
	d := traffic.Default()
	for _, tc := range []struct {
		ua   string
		want traffic.Class
	}{
		// An agent and a crawler in one user agent: the agent, either way round.
		{"Mozilla/5.0 (compatible; Googlebot/2.1; ChatGPT-User/1.0)", traffic.AI},
		{"Mozilla/5.0 (compatible; ChatGPT-User/1.0; Googlebot/2.1)", traffic.AI},
		// A search crawler before a training crawler, as the table orders them.
		{"GPTBot/1.1 OAI-SearchBot/1.0", traffic.SearchBot},
		// An agent built on a generic tool.
		{"curl/8.7.1 claude-code/2.1.0", traffic.AI},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36 Claude-User/1.0", traffic.AI},
		// A named SEO crawler before a generic tool.
		{"python-requests/2.32 AhrefsBot/7.0", traffic.OtherBot},
	} {
		if got := d.Classify(tc.ua, "/", ""); got != tc.want {
			t.Errorf("Classify(%q) = %v, want %v", tc.ua, got, tc.want)
		}
	}
}

// TestMaxUserAgentScan checks the bound on how much of a user agent is
// read: tokens past it are not seen, and a token it cuts is not matched.
func TestMaxUserAgentScan(t *testing.T) {
	d := traffic.Default()
	pad := func(n int) string { return "Mozilla/5.0 " + strings.Repeat("x", n-len("Mozilla/5.0 ")) }

	// "ClaudeBot" ends exactly at the bound: seen.
	ua := pad(traffic.MaxUserAgentScan-len(" ClaudeBot")) + " ClaudeBot"
	if len(ua) != traffic.MaxUserAgentScan {
		t.Fatalf("test setup: len %d", len(ua))
	}
	if got := d.Classify(ua+"/1.0 more", "/", ""); got != traffic.TrainingBot {
		t.Errorf("token ending at the bound: got %v, want training-bot", got)
	}
	// The bound falls inside "ClaudeBot": its prefix "Claude" must not count,
	// and neither must the whole token.
	withPrefixRule, err := d.With(traffic.Rule{Token: "Claude", Class: traffic.AI, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ua = pad(traffic.MaxUserAgentScan-len(" Claude")) + " ClaudeBot/1.0"
	if got := withPrefixRule.Classify(ua, "/", ""); got != traffic.Human {
		t.Errorf("token cut by the bound: got %v, want human", got)
	}
	// Entirely past the bound: not seen.
	ua = pad(traffic.MaxUserAgentScan) + " ClaudeBot/1.0"
	if got := d.Classify(ua, "/", ""); got != traffic.Human {
		t.Errorf("token past the bound: got %v, want human", got)
	}
	// Before the bound in a long user agent: seen.
	ua = "ClaudeBot/1.0 " + pad(4*traffic.MaxUserAgentScan)
	if got := d.Classify(ua, "/", ""); got != traffic.TrainingBot {
		t.Errorf("token at the start of a long user agent: got %v, want training-bot", got)
	}
}
