package traffic_test

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/traffic"
)

func TestClass(t *testing.T) {
	for _, tc := range []struct {
		c             traffic.Class
		name          string
		isView, isBot bool
	}{
		{traffic.Human, "human", true, false},
		{traffic.AI, "ai", true, false},
		{traffic.SearchBot, "search-bot", false, true},
		{traffic.TrainingBot, "training-bot", false, true},
		{traffic.OtherBot, "other-bot", false, true},
	} {
		if got := tc.c.String(); got != tc.name {
			t.Errorf("Class(%d).String() = %q, want %q", tc.c, got, tc.name)
		}
		if got := tc.c.IsView(); got != tc.isView {
			t.Errorf("%s.IsView() = %v, want %v", tc.name, got, tc.isView)
		}
		if got := tc.c.IsBot(); got != tc.isBot {
			t.Errorf("%s.IsBot() = %v, want %v", tc.name, got, tc.isBot)
		}
		if got, err := traffic.ParseClass(tc.name); err != nil || got != tc.c {
			t.Errorf("ParseClass(%q) = %v, %v; want %v", tc.name, got, err, tc.c)
		}
	}
	if got := traffic.Class(42).String(); got != "Class(42)" {
		t.Errorf("Class(42).String() = %q", got)
	}
	if traffic.Class(42).IsView() || traffic.Class(42).IsBot() {
		t.Error("an unknown class counts as a view or a bot")
	}
	for _, bad := range []string{"", "Human", "bot", "searchbot"} {
		if _, err := traffic.ParseClass(bad); err == nil {
			t.Errorf("ParseClass(%q) succeeded", bad)
		}
	}
	var zero traffic.Class
	if zero != traffic.Human {
		t.Error("the zero Class is not Human; an unmatched request must be human")
	}
}

func TestFeatureString(t *testing.T) {
	for f, want := range map[traffic.Feature]string{
		traffic.NoFeature:      "",
		traffic.MarkdownPath:   "markdown-path",
		traffic.LLMsTxt:        "llms-txt",
		traffic.AcceptMarkdown: "accept-markdown",
		traffic.EmptyUserAgent: "empty-user-agent",
		traffic.Feature(99):    "Feature(99)",
	} {
		if got := f.String(); got != want {
			t.Errorf("Feature(%d).String() = %q, want %q", uint8(f), got, want)
		}
	}
}
