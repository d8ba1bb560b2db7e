package docs

import (
	"fmt"
	"testing"
)

func navOf(t *testing.T, name, data string) *Navigation {
	t.Helper()
	n, err := ParseNavigation(name, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func entry(n *Navigation, p string) string {
	e, ok := n.Lookup(p)
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%q v=%s l=%s hidden=%v", e.Groups, e.Version, e.Language, e.Hidden)
}

// docs.json shapes from the platform's navigation guide: languages over
// tabs, anchors, dropdowns, products, menus, hidden and searchable parts.
func TestDocsJSONNavigation(t *testing.T) {
	n := navOf(t, "docs.json", `{
	  "navigation": {
	    "languages": [
	      {"language": "en", "banner": {"content": "Hi"}, "tabs": [
	        {"tab": "Docs", "anchors": [
	          {"anchor": "Guides", "icon": "book-open", "pages": ["quickstart", "/tutorial.mdx"]},
	          {"anchor": "Community", "href": "https://community.example.com"}
	        ]},
	        {"tab": "Developer tools", "menu": [
	          {"item": "API", "groups": [{"group": "Core endpoints", "pages": ["api/get", "POST /users"]}]}
	        ]},
	        {"tab": "Storage", "hidden": true, "searchable": true, "groups": [
	          {"group": "Buckets", "pages": ["storage/create"]},
	          {"group": "Old", "hidden": true, "pages": ["storage/old"]}
	        ]},
	        {"tab": "Home", "hidden": true, "pages": ["home"]},
	        {"tab": "Admin", "hidden": true, "groups": [{"group": "Shown", "searchable": true, "pages": ["admin/s"]}]}
	      ]},
	      {"language": "es", "dropdowns": [
	        {"dropdown": "Docs", "products": [
	          {"product": "Core", "groups": [{"group": "Inicio", "pages": ["es/quickstart", {"group": "Más", "root": "es/more/index", "pages": ["es/more/a"]}]}]}
	        ]}
	      ]},
	      {"language": "fr", "versions": [{"version": "2.0", "pages": ["fr/quickstart", "quickstart"]}]}
	    ]
	  },
	  "seo": {"indexing": "all"}
	}`)
	for p, want := range map[string]string{
		"/quickstart":     `[] v= l=en hidden=false`,
		"/tutorial":       `[] v= l=en hidden=false`,
		"/api/get":        `["Core endpoints"] v= l=en hidden=false`,
		"/storage/create": `["Buckets"] v= l=en hidden=false`,
		"/storage/old":    `["Old"] v= l=en hidden=true`,
		"/home":           `[] v= l=en hidden=true`,
		"/es/quickstart":  `["Inicio"] v= l=es hidden=false`,
		"/es/more":        `["Inicio" "Más"] v= l=es hidden=false`,
		"/es/more/a":      `["Inicio" "Más"] v= l=es hidden=false`,
		"/fr/quickstart":  `[] v=2.0 l=fr hidden=false`,
		"/admin/s":        `["Shown"] v= l=en hidden=false`,
		"/users":          "absent",
	} {
		if got := entry(n, p); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
	if !n.IndexHidden || n.Len() != 11 {
		t.Errorf("IndexHidden = %v, Len = %d", n.IndexHidden, n.Len())
	}
}

// A page listed in a hidden place and again in a visible one is visible.
func TestNavigationVisibleWins(t *testing.T) {
	n := navOf(t, "docs.json", `{"navigation": {"groups": [
	  {"group": "Hidden", "hidden": true, "pages": ["a"]},
	  {"group": "Shown", "pages": ["a", "b"]},
	  {"group": "Later", "pages": ["b"]}
	]}}`)
	if got := entry(n, "/a"); got != `["Shown"] v= l= hidden=false` {
		t.Errorf("/a: %s", got)
	}
	if got := entry(n, "/b"); got != `["Shown"] v= l= hidden=false` {
		t.Errorf("/b: %s (the first place wins)", got)
	}
}

// mint.json: navigation is a list of groups; versions are named on groups.
func TestMintJSONNavigation(t *testing.T) {
	n := navOf(t, "mint.json", `{
	  "name": "Example", "logo": {"light": "/logo/light.svg"},
	  "versions": ["v2", "v1"],
	  "tabs": [{"name": "API Reference V1", "url": "v1/api-reference", "version": "v1"}],
	  "navigation": [
	    {"group": "Getting Started", "pages": ["quickstart", {"group": "Install", "icon": "download", "pages": ["setup/windows"]}]},
	    {"group": "Old", "version": "v1", "pages": ["v1/quickstart"]}
	  ],
	  "seo": {"indexHiddenPages": true}
	}`)
	for p, want := range map[string]string{
		"/quickstart":    `["Getting Started"] v= l= hidden=false`,
		"/setup/windows": `["Getting Started" "Install"] v= l= hidden=false`,
		"/v1/quickstart": `["Old"] v=v1 l= hidden=false`,
	} {
		if got := entry(n, p); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
	if !n.IndexHidden {
		t.Error("seo.indexHiddenPages not read")
	}
}

func TestNavigationErrors(t *testing.T) {
	for name, c := range map[string][2]string{
		"not json":        {"docs.json", `{`},
		"array docs.json": {"docs.json", `{"navigation": []}`},
		"object mint":     {"mint.json", `{"navigation": {}}`},
		"wrong type":      {"docs.json", `{"navigation": {"groups": [{"group": 3}]}}`},
		"too deep":        {"docs.json", `{"navigation": ` + deep(100) + `}`},
		"other name":      {"nav.json", `{}`},
	} {
		if _, err := ParseNavigation(c[0], []byte(c[1])); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func deep(n int) string {
	s := `{"pages": ["a"]}`
	for range n {
		s = `{"group": "g", "pages": [` + s + `]}`
	}
	return s
}
