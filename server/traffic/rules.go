package traffic

import (
	"bytes"
	_ "embed" // the default rule table is compiled in
	"encoding/json"
	"fmt"
)

// Feature is a property of a request other than its user-agent tokens that
// a rule can match. Features exist because the contract counts Markdown
// requests as AI whatever their user agent says, and because an absent
// user agent deserves a decision of its own.
type Feature uint8

// The request features a rule can name. NoFeature marks a token rule.
const (
	// NoFeature is the zero value: the rule matches a user-agent token.
	NoFeature Feature = iota
	// MarkdownPath matches a path whose last segment ends in ".md"
	// (case-insensitive), ignoring any query or fragment.
	MarkdownPath
	// LLMsTxt matches a path whose last segment is "llms.txt" or
	// "llms-full.txt" (case-insensitive), at the root or under a base
	// path, since documentation is often served below one.
	LLMsTxt
	// AcceptMarkdown matches an Accept header that prefers Markdown: it
	// lists text/markdown (or text/x-markdown) with a q-value above zero
	// and no text/html with a higher q-value. Wildcards are ignored.
	AcceptMarkdown
	// EmptyUserAgent matches a request whose User-Agent is absent or
	// only spaces and tabs: no browser sends that.
	EmptyUserAgent

	numFeatures // keep last
)

// featureNames are the names the rule table uses; like class names they
// are part of the data format.
var featureNames = [numFeatures]string{
	NoFeature:      "",
	MarkdownPath:   "markdown-path",
	LLMsTxt:        "llms-txt",
	AcceptMarkdown: "accept-markdown",
	EmptyUserAgent: "empty-user-agent",
}

// String returns the feature's name as the rule table spells it.
func (f Feature) String() string {
	if f < numFeatures {
		return featureNames[f]
	}
	return fmt.Sprintf("Feature(%d)", uint8(f))
}

// parseFeature is the inverse of String for the named features.
func parseFeature(name string) (Feature, error) {
	for i := MarkdownPath; i < numFeatures; i++ {
		if featureNames[i] == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown feature %q", name)
}

// Rule maps one user-agent token, or one request feature, to a class.
// Exactly one of Token and Feature is set.
type Rule struct {
	// Token is a whole user-agent token, compared case-insensitively; it
	// may only contain token characters (see IsTokenByte).
	Token string
	// Feature is the request feature the rule matches when Token is empty.
	Feature Feature
	// Class is what a matching request is.
	Class Class
	// Source says where the rule comes from (a crawler's documentation
	// page, the contract), so that the table can be reviewed and updated.
	Source string
	// Note explains a choice the source does not settle, if any.
	Note string
}

// MaxNameBytes bounds an agent name: a rule whose token is longer is named
// OtherAgent, so that a name always fits where names are stored.
const MaxNameBytes = 64

// OtherAgent is the name of a rule whose token is longer than
// MaxNameBytes.
const OtherAgent = "other"

// featureAgentNames are the agent names of the feature rules: what a
// reader of a dashboard understands, where the feature's own name is the
// rule table's vocabulary. Each feature keeps a name of its own, since
// "an unknown client asked for llms.txt" and "a client negotiated
// Markdown" tell a documentation owner different things.
var featureAgentNames = [numFeatures]string{
	MarkdownPath:   "Markdown (.md URL)",
	LLMsTxt:        "llms.txt",
	AcceptMarkdown: "Markdown (Accept header)",
	EmptyUserAgent: "no user agent",
}

// Name returns the agent name of the rule, which ClassifyAgent reports for
// the requests it decides: its token as written in the table ("GPTBot"),
// OtherAgent for a token longer than MaxNameBytes, or a readable name for
// a feature ("llms.txt", "no user agent", "Markdown (.md URL)",
// "Markdown (Accept header)").
func (r Rule) Name() string {
	switch {
	case r.Token == "":
		if r.Feature < numFeatures {
			return featureAgentNames[r.Feature]
		}
		return OtherAgent
	case len(r.Token) > MaxNameBytes:
		return OtherAgent
	}
	return r.Token
}

// label names the rule in error messages.
func (r Rule) label() string {
	switch {
	case r.Token != "":
		return fmt.Sprintf("token %q", r.Token)
	case r.Feature != NoFeature:
		return fmt.Sprintf("feature %q", r.Feature)
	}
	return "empty rule"
}

// validate reports what is wrong with the rule, or nil.
func (r Rule) validate() error {
	if r.Class >= numClasses {
		return fmt.Errorf("unknown class %d", uint8(r.Class))
	}
	if r.Feature >= numFeatures {
		return fmt.Errorf("unknown feature %d", uint8(r.Feature))
	}
	if r.Token != "" && r.Feature != NoFeature {
		return fmt.Errorf("sets both a token and feature %q", r.Feature)
	}
	if r.Token == "" && r.Feature == NoFeature {
		return fmt.Errorf("empty token and no feature")
	}
	for i := 0; i < len(r.Token); i++ {
		if !IsTokenByte(r.Token[i]) {
			// A token with a separator in it could never equal a whole
			// token of a user agent, so the rule would be dead: refuse it.
			return fmt.Errorf("token has byte %q at %d, outside the token alphabet [A-Za-z0-9._-]", r.Token[i], i)
		}
	}
	return nil
}

// IsTokenByte reports whether b can be part of a user-agent token: ASCII
// letters, digits, '.', '_' and '-'. Every other byte (space, '/', ';',
// '(', ')', ',', '+', ':', '@', non-ASCII) separates tokens. Keeping '-'
// and '.' inside tokens is what makes "Claude-User" one token and stops
// "bot" from matching inside "bot.html" or "www.bing.com"; keeping '_'
// keeps names like "ia_archiver" and device models like "CUBOT_X30" whole.
func IsTokenByte(b byte) bool {
	return foldTable[b] != 0
}

// foldTable maps each token byte to its lower-case form and every
// separator to 0. The classifier scans user agents through it, so case
// folding costs one table load per byte and no allocation.
var foldTable = func() (t [256]byte) {
	for c := byte('a'); c <= 'z'; c++ {
		t[c] = c
		t[c-'a'+'A'] = c
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	t['.'], t['_'], t['-'] = '.', '_', '-'
	return t
}()

// rulesJSON is the default table; it is data, not code, so that updating
// a crawler list is a reviewable one-line change with its source beside it.
//
//go:embed rules.json
var rulesJSON []byte

// tableFile is the on-disk shape of a rule table.
type tableFile struct {
	Version int        `json:"version"`
	About   []string   `json:"about"`
	Rules   []ruleFile `json:"rules"`
}

// ruleFile is one rule as the table spells it. Class and feature are
// strings here so that a missing or misspelt class is an error instead of
// silently becoming Human, the zero value.
type ruleFile struct {
	Token   string `json:"token"`
	Feature string `json:"feature"`
	Class   string `json:"class"`
	Source  string `json:"source"`
	Note    string `json:"note"`
}

// Parse reads a rule table in the format of the embedded rules.json: an
// object with a positive "version" and a "rules" array whose entries have
// "token" or "feature", "class", "source" and an optional "note". Unknown
// fields are errors, so a typo cannot silently drop a rule's meaning.
func Parse(data []byte) (*Classifier, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f tableFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("traffic: parsing rule table: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("traffic: parsing rule table: data after the table")
	}
	if f.Version <= 0 {
		return nil, fmt.Errorf("traffic: rule table version %d: want a positive version", f.Version)
	}
	rules := make([]Rule, len(f.Rules))
	for i, fr := range f.Rules {
		r := Rule{Token: fr.Token, Source: fr.Source, Note: fr.Note}
		if fr.Feature != "" {
			feat, err := parseFeature(fr.Feature)
			if err != nil {
				return nil, fmt.Errorf("traffic: rule %d (%s): %w", i, r.label(), err)
			}
			r.Feature = feat
		}
		c, err := ParseClass(fr.Class)
		if err != nil {
			return nil, fmt.Errorf("traffic: rule %d (%s): %w", i, r.label(), err)
		}
		r.Class = c
		rules[i] = r
	}
	c, err := New(rules)
	if err != nil {
		return nil, err
	}
	c.version = f.Version
	return c, nil
}
