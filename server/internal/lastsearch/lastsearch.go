// Package lastsearch remembers, for a short while, the last search each
// client made through the /discovery search endpoint, so that the page
// endpoint can count a page fetched after it as a click on one of its
// results (toward the searches export's click-through rate and top
// clicked page).
//
// It stores no client's address: a client is known by the SHA-256 of a
// random salt drawn when the Memory is made and the client's name (its
// address and key), so that the map's keys cannot be turned back into
// addresses, even by someone reading the process's memory once the salt
// is gone. Entries last Window and the map holds at most MaxClients of
// them (the oldest goes first), in this process only; nothing is written
// anywhere.
package lastsearch

import (
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"slices"
	"sync"
	"time"
)

// Search is a search remembered: its project, its query as counted
// (normalised), when it was made, and the paths of its results.
type Search struct {
	ProjectID string
	Query     string
	At        time.Time
	Paths     []string
}

// Memory remembers each client's last search. It is safe for concurrent
// use.
type Memory struct {
	window time.Duration
	max    int
	salt   [32]byte

	mu      sync.Mutex
	entries map[[32]byte]*list.Element
	order   *list.List // of *entry, oldest first
}

type entry struct {
	key     [32]byte
	search  Search
	expires time.Time
}

// New returns a Memory whose entries last window, at most maxClients of
// them (at least 1).
func New(window time.Duration, maxClients int) *Memory {
	m := &Memory{window: window, max: max(maxClients, 1), entries: map[[32]byte]*list.Element{}, order: list.New()}
	rand.Read(m.salt[:])
	return m
}

// key is what the Memory knows client by.
func (m *Memory) key(client string) [32]byte {
	h := sha256.New()
	h.Write(m.salt[:])
	h.Write([]byte(client))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Remember makes s client's last search at now, replacing the one before.
func (m *Memory) Remember(client string, s Search, now time.Time) {
	k := m.key(client)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	if e, ok := m.entries[k]; ok {
		m.order.Remove(e)
		delete(m.entries, k)
	}
	for len(m.entries) >= m.max {
		oldest := m.order.Front()
		m.order.Remove(oldest)
		delete(m.entries, oldest.Value.(*entry).key)
	}
	m.entries[k] = m.order.PushBack(&entry{key: k, search: s, expires: now.Add(m.window)})
}

// Take returns client's last search if, at now, it is of project, within
// its window, and path is one of its results; the search is then
// forgotten, so that it counts one click at most. Another path leaves it
// remembered.
func (m *Memory) Take(client, project, path string, now time.Time) (Search, bool) {
	k := m.key(client)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	e, ok := m.entries[k]
	if !ok {
		return Search{}, false
	}
	en := e.Value.(*entry)
	if !now.Before(en.expires) || en.search.ProjectID != project || !slices.Contains(en.search.Paths, path) {
		return Search{}, false
	}
	m.order.Remove(e)
	delete(m.entries, k)
	return en.search, true
}

// sweep forgets the entries whose window ended by now. Entries are in the
// order they were made, so those that ended are at the front (unless the
// clock went back, when some wait a while longer: Take checks each).
func (m *Memory) sweep(now time.Time) {
	for e := m.order.Front(); e != nil; e = m.order.Front() {
		en := e.Value.(*entry)
		if now.Before(en.expires) {
			return
		}
		m.order.Remove(e)
		delete(m.entries, en.key)
	}
}

// Len returns the number of searches remembered.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
