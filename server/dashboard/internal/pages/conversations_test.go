package pages

import "testing"

// Only http(s) URLs with a host and paths of the site are links; every
// other scheme, a protocol-relative URL and anything malformed is not.
func TestSafeLink(t *testing.T) {
	for u, want := range map[string]bool{
		"/guide/install":                          true,
		"/guide?q=a&b=c#part":                     true,
		"https://docs.example.com/x":              true,
		"HTTP://docs.example.com":                 true,
		"https://docs.example.com:8443/a%20b":     true,
		"":                                        false,
		"guide/install":                           false,
		"//evil.example/":                         false,
		`/\evil.example/`:                         false,
		"/a\nb":                                   false,
		"javascript:alert(1)":                     false,
		"JavaScript:alert(1)":                     false,
		" javascript:alert(1)":                    false,
		"data:text/html,<script>x</script>":       false,
		"mailto:someone@example.com":              false,
		"ftp://example.com/file":                  false,
		"https:///no-host":                        false,
		"https://user:pass@docs.example.com/":     false,
		"https://docs.example.com/%zz":            false,
		"vbscript:msgbox(1)":                      false,
		"https://docs.example.com\\@evil.example": false,
	} {
		if got := SafeLink(u) != ""; got != want {
			t.Errorf("SafeLink(%q) = %q, want a link: %v", u, SafeLink(u), want)
		}
		if got := SafeLink(u); got != "" && got != u {
			t.Errorf("SafeLink(%q) = %q: a link is kept as it is", u, got)
		}
	}
}
