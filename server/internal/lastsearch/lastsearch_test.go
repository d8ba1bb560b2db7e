package lastsearch

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 8, 14, 9, 0, 0, 0, time.UTC)

func search(project string, paths ...string) Search {
	return Search{ProjectID: project, Query: "q", At: t0, Paths: paths}
}

// A search is taken once, by its client, for its project and one of its
// results, within its window; the newest replaces the one before.
func TestTakeOnceWithinTheWindow(t *testing.T) {
	m := New(time.Minute, 10)
	m.Remember("a", search("p", "/x", "/y"), t0)
	for _, tc := range []struct {
		client, project, path string
		at                    time.Duration
		ok                    bool
	}{
		{"b", "p", "/x", 0, false},                // another client
		{"a", "q", "/x", 0, false},                // another project
		{"a", "p", "/z", 0, false},                // no result of it
		{"a", "p", "/y", 59 * time.Second, true},  // within the window
		{"a", "p", "/x", 59 * time.Second, false}, // taken already
	} {
		if _, ok := m.Take(tc.client, tc.project, tc.path, t0.Add(tc.at)); ok != tc.ok {
			t.Errorf("Take(%s, %s, %s) at +%v: %v, want %v", tc.client, tc.project, tc.path, tc.at, ok, tc.ok)
		}
	}
	m.Remember("a", search("p", "/x"), t0)
	if _, ok := m.Take("a", "p", "/x", t0.Add(time.Minute)); ok {
		t.Errorf("taken at the window's end")
	}
	m.Remember("a", search("p", "/x"), t0)
	m.Remember("a", search("p", "/new"), t0)
	if _, ok := m.Take("a", "p", "/x", t0); ok {
		t.Errorf("an older search taken after a newer one replaced it")
	}
	if s, ok := m.Take("a", "p", "/new", t0); !ok || s.Paths[0] != "/new" {
		t.Errorf("the newer search: %v %v", s, ok)
	}
}

// The map holds at most its bound, dropping the oldest, and forgets what
// expired.
func TestBoundedAndSwept(t *testing.T) {
	m := New(time.Minute, 3)
	for i := range 5 {
		m.Remember(fmt.Sprint(i), search("p", "/x"), t0.Add(time.Duration(i)*time.Second))
	}
	if m.Len() != 3 {
		t.Errorf("%d entries, want 3", m.Len())
	}
	if _, ok := m.Take("0", "p", "/x", t0.Add(5*time.Second)); ok {
		t.Errorf("the oldest was kept past the bound")
	}
	if _, ok := m.Take("4", "p", "/x", t0.Add(5*time.Second)); !ok {
		t.Errorf("the newest was dropped")
	}
	m.Remember("5", search("p", "/x"), t0.Add(2*time.Minute))
	if m.Len() != 1 {
		t.Errorf("%d entries after the others expired, want 1", m.Len())
	}
}

// Clients are known by a salted hash: two Memories know one client by
// different keys, and neither key holds the client's name.
func TestClientsAreHashedWithASalt(t *testing.T) {
	a, b := New(time.Minute, 1), New(time.Minute, 1)
	if a.key("192.0.2.1/32 akey_1") == b.key("192.0.2.1/32 akey_1") {
		t.Errorf("two Memories share a key for one client: the salt is not random")
	}
}
