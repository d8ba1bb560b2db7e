package store

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// AssistantKeyStore keeps the assistant keys with which the public
// /discovery endpoints (search and page content) are called, and finds a
// project by its domain identifier, by which those endpoints address it.
type AssistantKeyStore interface {
	// ProjectByDomain returns the project whose Domain is domain, or
	// ErrNotFound (always for ""). Domains compare by bytes.
	ProjectByDomain(ctx context.Context, domain string) (Project, error)

	// CreateAssistantKey stores a new assistant key. ErrConflict if its ID
	// or Hash exists (among assistant keys); ErrNotFound if its project
	// does not exist.
	CreateAssistantKey(ctx context.Context, k AssistantKey) error
	// AssistantKeyByHash returns the assistant key whose Hash equals hash,
	// revoked ones included (the caller decides), or ErrNotFound. Admin
	// keys (KeyByHash) are never returned, nor the other way round.
	AssistantKeyByHash(ctx context.Context, hash []byte) (AssistantKey, error)
	// AssistantKeys returns the assistant keys of a project, revoked ones
	// included, ordered by CreatedAt, then ID; "" lists every project's.
	AssistantKeys(ctx context.Context, projectID string) ([]AssistantKey, error)
	// RevokeAssistantKey sets the key's RevokedAt to at, unless it is
	// revoked already, in which case the first time stays (see
	// AssistantKey.Revoked). ErrNotFound if no such key.
	RevokeAssistantKey(ctx context.Context, id string, at time.Time) error
}

// AssistantKey is a key of the hosted platform's Assistant API kind
// (mint_dsc_...): it admits requests to one project's /discovery
// endpoints, from the web origins it lists or from servers. Pages may hold
// it, but a backend that proxies it keeps it secret, so, as for an APIKey,
// only the SHA-256 of the secret is stored.
type AssistantKey struct {
	ID        string // public identifier, for listing and revoking
	Hash      []byte // SHA-256 of the secret
	Hint      string // the secret's first characters, for listings
	ProjectID string
	Name      string   // what the key is for
	Origins   []string // the web origins whose pages may use it, sorted
	CreatedAt time.Time
	RevokedAt time.Time // zero: not revoked
}

// Revoked returns k revoked at at, as Store.RevokeAssistantKey leaves it,
// with changed true; a key revoked already is returned as it is, with
// changed false, since its first revocation is when it stopped working.
func (k AssistantKey) Revoked(at time.Time) (key AssistantKey, changed bool) {
	if !k.RevokedAt.IsZero() {
		return k, false
	}
	k.RevokedAt = at
	return k, true
}

// MaxDomainLength is the longest domain identifier: a DNS label's.
const MaxDomainLength = 63

// DomainProblem says what keeps d from being a project's domain
// identifier, or "" if nothing does. A domain is what the hosted service
// puts before .mintlify.site, so the rules are a DNS label's, in lower
// case: 1 to 63 letters a-z, digits or '-', neither first nor last a '-'.
func DomainProblem(d string) string {
	switch {
	case d == "":
		return "is empty"
	case len(d) > MaxDomainLength:
		return "is longer than 63 characters, the most a DNS label holds"
	case d[0] == '-' || d[len(d)-1] == '-':
		return "starts or ends with '-'"
	}
	for _, c := range d {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c >= 'A' && c <= 'Z':
			return "holds upper-case letters; write it in lower case (" + strings.ToLower(d) + ")"
		default:
			return "holds " + strconv.QuoteRune(c) + "; only letters a-z, digits and '-' are allowed, as in a DNS label"
		}
	}
	return ""
}

// Validate returns what makes k unfit for CreateAssistantKey, or nil.
func (k AssistantKey) Validate() error {
	switch {
	case k.ID == "":
		return Invalid("empty assistant key ID")
	case len(k.Hash) == 0:
		return Invalid("assistant key %q: empty hash", k.ID)
	case k.ProjectID == "":
		return Invalid("assistant key %q: empty project ID", k.ID)
	}
	for _, o := range k.Origins {
		if o == "" || strings.ContainsFunc(o, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return Invalid("assistant key %q: origin %q is empty or holds a space or control character", k.ID, o)
		}
	}
	return textProblems("assistant key "+quoteID(k.ID), "ID", k.ID, "hint", k.Hint, "name", k.Name, "origins", strings.Join(k.Origins, " "))
}

// ValidateRevokeAssistantKey returns what makes id and at unfit for
// RevokeAssistantKey, or nil. A zero at is refused: it would store "not
// revoked".
func ValidateRevokeAssistantKey(id string, at time.Time) error {
	switch {
	case id == "":
		return Invalid("empty assistant key ID")
	case at.IsZero():
		return Invalid("assistant key %q: zero revocation time", id)
	}
	return nil
}
