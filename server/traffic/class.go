package traffic

import "fmt"

// Class is the kind of client behind a request. The page-view recorder
// counts Human and AI as views (the hosted service's "human" and "ai"
// columns) and keeps the three bot classes apart, so that crawlers never
// inflate what a documentation owner reads as readership.
type Class uint8

// The classes, in the order the hosted service's contract names them.
// Human is the zero value on purpose: the contract says a request that no
// rule matches is human, so an unset Class must mean the same thing.
const (
	// Human is a person reading the page in a browser, and the default
	// for anything no rule recognises.
	Human Class = iota
	// AI is an agent fetching a page for a person right now (ChatGPT-User,
	// Claude-User, coding agents) or any request for Markdown.
	AI
	// SearchBot is a crawler that builds a search index (Googlebot,
	// bingbot, OAI-SearchBot, PerplexityBot).
	SearchBot
	// TrainingBot is a crawler that collects text to train models
	// (GPTBot, ClaudeBot, CCBot, Amazonbot).
	TrainingBot
	// OtherBot is any other automated client: SEO crawlers, link
	// previewers, headless browsers, HTTP libraries.
	OtherBot

	numClasses // keep last: the number of valid classes
)

// classNames are the names used in the rule table and in String; they are
// part of the data format, so changing one breaks existing tables.
var classNames = [numClasses]string{
	Human:       "human",
	AI:          "ai",
	SearchBot:   "search-bot",
	TrainingBot: "training-bot",
	OtherBot:    "other-bot",
}

// String returns the class's name as the rule table spells it ("human",
// "ai", "search-bot", "training-bot", "other-bot"), so logs and tables
// use one vocabulary.
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// IsView reports whether a request of this class counts as a page view.
// Only Human and AI do: the hosted service's views are split into exactly
// those two columns and its total is their sum.
func (c Class) IsView() bool {
	return c == Human || c == AI
}

// IsBot reports whether the class is one of the three crawler classes,
// which are recorded apart from views.
func (c Class) IsBot() bool {
	return c == SearchBot || c == TrainingBot || c == OtherBot
}

// ParseClass returns the class with the given table name. It is exact (no
// case folding) because the names are a data format, not user input.
func ParseClass(name string) (Class, error) {
	for i, n := range classNames {
		if n == name {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("traffic: unknown class %q", name)
}
