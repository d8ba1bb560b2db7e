package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Navigation is a site's navigation as docs.json (the platform's current
// configuration file) or mint.json (the older one) declares it: which
// pages the site lists, in which groups, versions and languages, and which
// of its parts are hidden.
//
// Both files are read with encoding/json, their unknown fields ignored.
// docs.json's navigation nests pages, groups, tabs, anchors, dropdowns,
// products, menus, versions and languages in any order; a page is a
// string (its path from the docs root, the extension optional) or a
// nested group; a group's root page belongs to it. mint.json's navigation
// is a list of groups, each maybe with a version. Entries that are not
// files (OpenAPI operations such as "GET /users", links) are not pages.
type Navigation struct {
	// File is "docs.json" or "mint.json".
	File string
	// IndexHidden is the site's choice to keep hidden pages in its search
	// (docs.json seo.indexing "all"; mint.json seo.indexHiddenPages).
	IndexHidden bool
	pages       map[string]NavEntry
}

// NavEntry is a page's place in the navigation.
type NavEntry struct {
	// Groups are the names of the groups the page is in, outermost
	// first. Tabs, anchors, dropdowns and the like are not groups.
	Groups            []string
	Version, Language string
	// Hidden: the page sits under a hidden tab, group or other part (one
	// not made searchable again with searchable: true).
	Hidden bool
}

// Lookup is the navigation's entry for the page served at urlPath. A page
// listed more than once takes its first place, as the platform does; but a
// place that is not hidden wins over hidden ones.
func (n *Navigation) Lookup(urlPath string) (NavEntry, bool) {
	e, ok := n.pages[urlPath]
	return e, ok
}

// Len is how many pages the navigation lists.
func (n *Navigation) Len() int { return len(n.pages) }

// maxNavDepth bounds how deep the navigation may nest: real sites nest a
// handful of levels, and the walk recurses.
const maxNavDepth = 64

// navNode is any part of the navigation; the fields a part does not have
// stay empty.
type navNode struct {
	Group, Tab, Anchor, Dropdown, Product, Item string
	Version, Language                           string
	Root                                        string
	Hidden, Searchable                          *bool
	Pages                                       []json.RawMessage
	Groups, Tabs, Anchors, Dropdowns, Products  []json.RawMessage
	Menu, Versions, Languages                   []json.RawMessage
}

type navContext struct {
	groups            []string
	version, language string
	hidden            bool
}

// ParseNavigation reads a docs.json or mint.json (name says which).
func ParseNavigation(name string, data []byte) (*Navigation, error) {
	var top struct {
		Navigation json.RawMessage
		SEO        struct {
			Indexing         string
			IndexHiddenPages bool
		} `json:"seo"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	n := &Navigation{File: name, pages: map[string]NavEntry{}}
	raw := bytes.TrimSpace(top.Navigation)
	switch name {
	case "docs.json":
		n.IndexHidden = top.SEO.Indexing == "all"
		if len(raw) == 0 || raw[0] != '{' {
			return nil, fmt.Errorf("docs.json: navigation is not an object")
		}
		if err := n.walk(raw, navContext{}, 0); err != nil {
			return nil, fmt.Errorf("docs.json: %w", err)
		}
	case "mint.json":
		n.IndexHidden = top.SEO.IndexHiddenPages
		var groups []json.RawMessage
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, fmt.Errorf("mint.json: navigation is not a list of groups: %w", err)
		}
		for _, g := range groups {
			if err := n.walk(g, navContext{}, 0); err != nil {
				return nil, fmt.Errorf("mint.json: %w", err)
			}
		}
	default:
		return nil, fmt.Errorf("%s: not a navigation file (docs.json or mint.json)", name)
	}
	return n, nil
}

func (n *Navigation) walk(raw json.RawMessage, ctx navContext, depth int) error {
	if depth > maxNavDepth {
		return fmt.Errorf("navigation nested deeper than %d levels", maxNavDepth)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var page string
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		n.add(page, ctx)
		return nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil // not a part of the navigation this reader knows
	}
	var node navNode
	if err := json.Unmarshal(raw, &node); err != nil {
		return err
	}
	if node.Version != "" {
		ctx.version = node.Version
	}
	if node.Language != "" {
		ctx.language = node.Language
	}
	if node.Group != "" {
		ctx.groups = append(ctx.groups[:len(ctx.groups):len(ctx.groups)], node.Group)
	}
	// The platform: hidden on any part hides what is under it; on a tab
	// or group, searchable: true keeps what is under it searchable.
	searchable := node.Searchable != nil && *node.Searchable && (node.Group != "" || node.Tab != "")
	switch {
	case node.Hidden != nil && *node.Hidden && !searchable:
		ctx.hidden = true
	case searchable:
		ctx.hidden = false
	}
	if node.Root != "" {
		n.add(node.Root, ctx)
	}
	for _, list := range [][]json.RawMessage{node.Pages, node.Groups, node.Tabs, node.Anchors, node.Dropdowns,
		node.Products, node.Menu, node.Versions, node.Languages} {
		for _, child := range list {
			if err := n.walk(child, ctx, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// add records the page named entry at ctx.
func (n *Navigation) add(entry string, ctx navContext) {
	p, ok := navPagePath(entry)
	if !ok {
		return
	}
	if old, seen := n.pages[p]; seen && (!old.Hidden || ctx.hidden) {
		return
	}
	n.pages[p] = NavEntry{Groups: ctx.groups, Version: ctx.version, Language: ctx.language, Hidden: ctx.hidden}
}

// navPagePath is the URL path of a navigation entry, ok false for one that
// is not a file (an OpenAPI operation, a link).
func navPagePath(entry string) (string, bool) {
	e := strings.TrimSpace(entry)
	if e == "" || strings.ContainsAny(e, " \t") || strings.Contains(e, "://") {
		return "", false
	}
	e = strings.TrimPrefix(path.Clean("/"+e), "/")
	if stem, ok := pageStem(e); ok {
		e = stem
	}
	return servedPath(e), true
}
