package pages

import (
	"net/url"
	"strings"

	"github.com/docsapi/docsapi-go/server/store"
)

// ConversationsPage is a page of the questions readers asked the
// assistant over a period, newest first, each linking to its thread;
// Unanswered keeps only those it could not answer from the docs.
type ConversationsPage struct {
	Frame
	Period
	Unanswered bool
	// Callers counts the period's questions by who asked (all of them,
	// answered or not); Before is the total of the period before.
	Callers store.CallerCounts
	Before  int64
	Rows    []Conversation
	Next    string // the URL of the page of earlier questions, "" on the last
	First   string // the first (newest) page's URL, "" on it
	// Problem is what is wrong with the page's own parameters (the
	// period's problems are Period.Problem).
	Problem string
}

// Conversation is one question and its reply, and the URL of its thread
// at the exchange.
type Conversation struct {
	store.Exchange
	ThreadURL string
}

// ThreadPage is one thread with the assistant, exchange by exchange, with
// the sources of each reply.
type ThreadPage struct {
	Frame
	Thread    store.Thread
	Exchanges []store.Exchange
	Back      string // the conversations page's URL
}

// SafeLink returns u when a page may link to it: an http or https URL
// with a host, or a path of the site ("/guide", not "//host"); "" for
// anything else (javascript:, data:, relative or malformed links), which a
// page then shows as text. What readers asked and what the model answered
// is untrusted, and html/template's own filter lets through schemes such
// as mailto: that have no place among a reply's sources.
func SafeLink(u string) string {
	if strings.HasPrefix(u, "/") {
		if strings.HasPrefix(u, "//") || strings.HasPrefix(u, `/\`) || strings.ContainsAny(u, "\\\x00\r\n\t") {
			return ""
		}
		if _, err := url.Parse(u); err != nil {
			return ""
		}
		return u
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil || strings.ContainsAny(u, "\\\x00\r\n\t") {
		return ""
	}
	if s := strings.ToLower(p.Scheme); s != "http" && s != "https" {
		return ""
	}
	return u
}

func (ConversationsPage) file() string { return "conversations.html" }
func (ThreadPage) file() string        { return "thread.html" }
