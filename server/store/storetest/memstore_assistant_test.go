package storetest_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// assistantMutants are the reference store's deliberate bugs in projects'
// domains and assistant keys, and the subtests (area/name) that must fail
// with each; see TestMutantsFail.
var assistantMutants = map[string][]string{
	"domainDropped":            {"Domains/DomainRoundTripsAndFindsItsProjectExactly", "Projects/CreateThenGetRoundTripsEveryField"},
	"domainPrefixMatch":        {"Domains/DomainRoundTripsAndFindsItsProjectExactly"},
	"domainFoldsCase":          {"Domains/DomainRoundTripsAndFindsItsProjectExactly"},
	"domainsNotUnique":         {"Domains/TakenDomainConflictsAndEmptyOnesDoNot"},
	"emptyDomainsUnique":       {"Domains/TakenDomainConflictsAndEmptyOnesDoNot"},
	"domainUpdateUnchecked":    {"Domains/TakenDomainConflictsAndEmptyOnesDoNot"},
	"domainKeptOnUpdate":       {"Domains/UpdateMovesADomainBetweenProjects"},
	"domainChecksSkipped":      {"Domains/InvalidDomainsAreRefusedAndStoreNothing"},
	"assistantOriginsUnsorted": {"AssistantKeys/CreateThenByHashRoundTripsWithOriginsSorted"},
	"assistantHashPrefixMatch": {"AssistantKeys/UnknownHashesAndAdminKeysAreNotFound"},
	"assistantKeysAreAdmin":    {"AssistantKeys/UnknownHashesAndAdminKeysAreNotFound"},
	"assistantKeyOverwrite":    {"AssistantKeys/TakenIDOrHashConflictsAndMissingProjectIsNotFound"},
	"assistantDuplicateHash":   {"AssistantKeys/TakenIDOrHashConflictsAndMissingProjectIsNotFound"},
	"assistantAnyProject":      {"AssistantKeys/TakenIDOrHashConflictsAndMissingProjectIsNotFound"},
	"assistantKeysAnyProject":  {"AssistantKeys/KeysAreListedPerProjectByCreatedAtThenID"},
	"assistantKeysByID":        {"AssistantKeys/KeysAreListedPerProjectByCreatedAtThenID"},
	"assistantRevokeOverwrite": {"AssistantKeys/RevokeKeepsTheFirstRevocationAndByHashStillFindsIt"},
	"assistantHidesRevoked":    {"AssistantKeys/RevokeKeepsTheFirstRevocationAndByHashStillFindsIt"},
	"assistantRevokesAll":      {"AssistantKeys/RevokeKeepsTheFirstRevocationAndByHashStillFindsIt"},
	"assistantChecksSkipped":   {"AssistantKeys/InvalidArgumentsAreRefusedAndStoreNothing"},
}

// skipsDomainCheck reports whether the mutant that skips the checks of a
// project's domain lets p, refused by p.Validate, through.
func (m *memStore) skipsDomainCheck(p store.Project) bool {
	return m.is("domainChecksSkipped") && p.ID != ""
}

// domainTaken returns ErrConflict if another project holds p's domain.
// The caller holds m.mu.
func (m *memStore) domainTaken(p *store.Project) error {
	if m.is("domainDropped") {
		p.Domain = ""
		return nil
	}
	for _, o := range m.projects {
		if o.ID == p.ID || m.is("domainsNotUnique") {
			continue
		}
		if o.Domain == p.Domain && (p.Domain != "" || m.is("emptyDomainsUnique")) {
			return fmt.Errorf("project %q: domain %q: %w", p.ID, p.Domain, store.ErrConflict)
		}
	}
	return nil
}

func (m *memStore) ProjectByDomain(_ context.Context, domain string) (store.Project, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(m.projects)) {
		p := m.projects[id]
		d := p.Domain
		match := d == domain
		switch {
		case m.is("domainPrefixMatch"):
			match = domain != "" && strings.HasPrefix(d, domain)
		case m.is("domainFoldsCase"):
			match = strings.EqualFold(d, domain)
		}
		if domain != "" && match {
			return p, nil
		}
	}
	return store.Project{}, fmt.Errorf("project of domain %q: %w", domain, store.ErrNotFound)
}

// assistantKeys returns the assistant keys, made on first use. The caller
// holds m.mu.
func (m *memStore) assistantKeys() map[string]store.AssistantKey {
	if m.assistant == nil {
		m.assistant = map[string]store.AssistantKey{}
	}
	return m.assistant
}

func (m *memStore) CreateAssistantKey(_ context.Context, k store.AssistantKey) error {
	if err := k.Validate(); err != nil && !m.is("assistantChecksSkipped") {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.projects[k.ProjectID]; !ok && !m.is("assistantAnyProject") {
		return fmt.Errorf("project %q: %w", k.ProjectID, store.ErrNotFound)
	}
	keys := m.assistantKeys()
	if _, ok := keys[k.ID]; ok && !m.is("assistantKeyOverwrite") {
		return fmt.Errorf("assistant key %q: %w", k.ID, store.ErrConflict)
	}
	for _, o := range keys {
		if bytes.Equal(o.Hash, k.Hash) && !m.is("assistantDuplicateHash") {
			return fmt.Errorf("assistant key %q: hash %w", k.ID, store.ErrConflict)
		}
	}
	k.Hash = bytes.Clone(k.Hash)
	k.Origins = slices.Clone(k.Origins)
	if !m.is("assistantOriginsUnsorted") {
		slices.Sort(k.Origins)
		k.Origins = slices.Compact(k.Origins)
	}
	k.CreatedAt, k.RevokedAt = m.norm(k.CreatedAt), m.norm(k.RevokedAt)
	keys[k.ID] = k
	return nil
}

func (m *memStore) AssistantKeyByHash(_ context.Context, hash []byte) (store.AssistantKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.assistantKeys() {
		if m.is("assistantHidesRevoked") && !k.RevokedAt.IsZero() {
			continue
		}
		if bytes.Equal(k.Hash, hash) || (m.is("assistantHashPrefixMatch") && len(hash) > 0 && bytes.HasPrefix(k.Hash, hash)) {
			return k, nil
		}
	}
	if m.is("assistantKeysAreAdmin") {
		for _, k := range m.keys {
			if bytes.Equal(k.Hash, hash) {
				return store.AssistantKey{ID: k.ID, Hash: k.Hash, Hint: k.Hint, Name: k.Name, CreatedAt: k.CreatedAt}, nil
			}
		}
	}
	return store.AssistantKey{}, fmt.Errorf("assistant key: %w", store.ErrNotFound)
}

func (m *memStore) AssistantKeys(_ context.Context, projectID string) ([]store.AssistantKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ks := []store.AssistantKey{}
	for _, k := range m.assistantKeys() {
		if projectID == "" || k.ProjectID == projectID || m.is("assistantKeysAnyProject") {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(a, b store.AssistantKey) int {
		if m.is("assistantKeysByID") {
			return strings.Compare(a.ID, b.ID)
		}
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return ks, nil
}

func (m *memStore) RevokeAssistantKey(_ context.Context, id string, at time.Time) error {
	if err := store.ValidateRevokeAssistantKey(id, at); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.assistantKeys()
	k, ok := keys[id]
	if !ok {
		return fmt.Errorf("assistant key %q: %w", id, store.ErrNotFound)
	}
	if m.is("assistantRevokesAll") {
		for oid, o := range keys {
			if o.RevokedAt.IsZero() {
				o.RevokedAt = m.norm(at)
				keys[oid] = o
			}
		}
		return nil
	}
	if next, changed := k.Revoked(m.norm(at)); changed || m.is("assistantRevokeOverwrite") {
		next.RevokedAt = m.norm(at)
		keys[id] = next
	}
	return nil
}
