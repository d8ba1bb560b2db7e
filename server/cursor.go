package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"
)

// Cursors of the cursor-paginated exports (feedback, searches) are
// keyset positions: the sort key of the last row of the page before, so
// that rows added while a client pages never shift the pages to come (an
// offset would repeat or skip rows). A position names data (a time and an
// ID, a count and a query), so a cursor is sealed:
//
//	base64url( version | position | HMAC-SHA256(key, scope | position)[:16] )
//
// The scope is what the cursor was issued for: the export, the project
// and every filter of the query (dates, source, statuses). It is not in
// the cursor, only under its MAC, so a cursor replayed on another project
// or with other filters, or changed in any bit, fails the check and is
// refused with a 400 that names the cursor. The page size may change from
// page to page.
//
// The key must be the same in every replica sharing a database, or a
// client's next page, served by another replica, would be refused. It is
// derived from Config.Secret (secret.go), which every replica is given and
// the database never holds: a copy of the database cannot seal a cursor.

const (
	cursorVersion  = 1
	cursorMACBytes = 16
	// maxCursorLength bounds a cursor as sent: a position holds a query
	// (at most store.MaxQueryLength characters) or an ID.
	maxCursorLength = 2048
)

// errBadCursor is the refusal of a cursor that was not sealed by this
// server for this scope.
var errBadCursor = errors.New("cursor is not valid for this project and query: pass the nextCursor of a page of the same export with the same filters, unchanged")

// scope builds the scope of a cursor from its parts, each length-prefixed
// so that no two lists of parts make the same scope.
func scope(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// sealCursor returns the cursor of position in scope.
func sealCursor(key, scope, position []byte) string {
	b := append([]byte{cursorVersion}, position...)
	b = append(b, cursorMAC(key, scope, position)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// openCursor returns the position of cursor, if it was sealed with key
// for scope; errBadCursor otherwise.
func openCursor(key, scope []byte, cursor string) ([]byte, error) {
	if len(cursor) > maxCursorLength {
		return nil, errBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 1+cursorMACBytes || b[0] != cursorVersion {
		return nil, errBadCursor
	}
	position, mac := b[1:len(b)-cursorMACBytes], b[len(b)-cursorMACBytes:]
	if !hmac.Equal(mac, cursorMAC(key, scope, position)) {
		return nil, errBadCursor
	}
	return position, nil
}

func cursorMAC(key, scope, position []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(binary.AppendUvarint(nil, uint64(len(scope))))
	m.Write(scope)
	m.Write(position)
	return m.Sum(nil)[:cursorMACBytes]
}

// position is a cursor's position as it is written: integers as varints,
// strings length-prefixed.
type position struct{ b []byte }

func (p *position) int(v int64) *position { p.b = binary.AppendVarint(p.b, v); return p }
func (p *position) str(v string) *position {
	p.b = append(binary.AppendUvarint(p.b, uint64(len(v))), v...)
	return p
}

// positionReader reads a position back; a short or garbled one is an
// error. (A sealed position is the server's own, so this only fails for a
// cursor of another version of the layout.)
type positionReader struct {
	b   []byte
	err error
}

func (r *positionReader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errBadCursor
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *positionReader) str() string {
	l, n := binary.Uvarint(r.b)
	if n <= 0 || l > uint64(len(r.b)-n) {
		r.err = errBadCursor
		return ""
	}
	v := string(r.b[n : n+int(l)])
	r.b = r.b[n+int(l):]
	return v
}

// done reports the first error, or one for bytes left over.
func (r *positionReader) done() error {
	if r.err == nil && len(r.b) > 0 {
		return errBadCursor
	}
	return r.err
}

// sealTimeID returns the cursor of the place (t, id) in scope: the
// position of a row in the exports and lists ordered newest first.
func sealTimeID(key, scope []byte, t time.Time, id string) string {
	return sealCursor(key, scope, new(position).int(t.UnixMicro()).str(id).b)
}

// openTimeID returns the place a cursor of sealTimeID holds, if it was
// sealed with key for scope; errBadCursor otherwise.
func openTimeID(key, scope []byte, cursor string) (time.Time, string, error) {
	pos, err := openCursor(key, scope, cursor)
	if err != nil {
		return time.Time{}, "", err
	}
	r := &positionReader{b: pos}
	t, id := time.UnixMicro(r.int()).UTC(), r.str()
	if err := r.done(); err != nil || id == "" {
		return time.Time{}, "", errBadCursor
	}
	return t, id, nil
}
