package docsupdate

import (
	"testing"

	"github.com/docsapi/docsapi-go/server/docs"
)

// An index read by another version of the reader, or with other
// settings, must not pass for one read now: every page is then read again.
func TestFingerprintNamesTheReaderAndItsSettings(t *testing.T) {
	base := docs.Options{Root: "docs", Exclude: []string{"drafts"}}
	fp := fingerprint(base, docs.ReaderVersion)
	if fp != fingerprint(docs.Options{Root: "/docs/", Exclude: []string{"drafts"}}, docs.ReaderVersion) {
		t.Error("the same root written with slashes gives another fingerprint")
	}
	for what, other := range map[string]string{
		"another reader":  fingerprint(base, docs.ReaderVersion+1),
		"another root":    fingerprint(docs.Options{Root: "site", Exclude: base.Exclude}, docs.ReaderVersion),
		"another exclude": fingerprint(docs.Options{Root: base.Root}, docs.ReaderVersion),
	} {
		if other == fp {
			t.Errorf("%s gives the same fingerprint %s", what, fp)
		}
	}
}
