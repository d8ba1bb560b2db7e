// Package traffic classifies documentation page requests the way the
// hosted service splits its traffic: by user agent, case-insensitively,
// first matching rule wins, no match means human. AI traffic is agents
// acting for a user (ChatGPT-User, Claude-User, claude-code, Cursor,
// Perplexity-User, ...) and any request for Markdown (a .md URL,
// llms.txt, an Accept header preferring text/markdown); search crawlers,
// training crawlers and other bots are kept apart so they are not counted
// as readers.
//
// The rules are data: rules.json, embedded, versioned, each rule with its
// source. A rule names either a whole user-agent token or a request
// feature. Tokens are maximal runs of ASCII letters, digits, '.', '_' and
// '-' (see IsTokenByte), so "Claude-User" matches "... Claude-User/1.0"
// while a rule "bot" would match neither "Abbott" nor "bot.html".
//
// Precedence is table order. The embedded table puts agents acting for a
// user first (a user agent naming an agent and a browser or crawler is
// AI), then search, training and other named crawlers, then the Markdown
// features, then generic tools such as curl and HeadlessChrome, then the
// empty user agent. So a known crawler fetching a .md file keeps its
// crawler class, while curl, an unknown client or an empty user agent
// fetching Markdown counts as AI.
//
// Classify runs on every page request, so it neither allocates nor uses
// regular expressions: it scans the user agent once, tokenising in place,
// and rejects almost every browser token with one table load.
package traffic
