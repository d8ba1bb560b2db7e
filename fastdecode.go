package docsapi

import (
	"sync"
	"time"
	"unicode/utf8"
)

// The bodies read most often, a page of an export and a polled job, are
// first decoded by hand, straight into the public types, when they come in
// the plain form servers write: known keys once each, strings without
// escapes, counts as plain integers. encoding/json with the wire types costs
// several times as much for a page (reflection, an UnmarshalJSON call per
// count, then a copy of every row from the wire type into the public one).
//
// The hand decoder takes that form only. Anything else (an escape, an
// unknown or repeated key, 12.0, a null where it expects a value, bad
// syntax) makes it decline without changing its destination, and the body
// goes to the wire types, which stay the one definition of what a body
// means and of every error: the hand decoder never has to reproduce an
// error message, and a server that adds a field costs speed, not
// correctness. A body it takes must decode to exactly what the wire types
// give; fastdecode_test.go checks that, and fuzzes it.

// fastDecoder is implemented by results with a hand decoder. decodeFast
// reports whether it decoded data; when it did not, the receiver is
// unchanged. Like bodyDecoder, it must not keep data.
type fastDecoder interface {
	decodeFast(data []byte) bool
}

// plainJSON reads JSON in the plain form described above. Every method
// reports false on anything else, and the reader is then abandoned.
type plainJSON struct {
	b []byte
	i int
}

func (s *plainJSON) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next consumes c, after white space, if it comes next.
func (s *plainJSON) next(c byte) bool {
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (s *plainJSON) end() bool {
	s.skipSpace()
	return s.i == len(s.b)
}

// str reads a string without escapes or control characters, in valid
// UTF-8: its bytes are then exactly the decoded value (encoding/json would
// replace invalid UTF-8). The result points into the body.
func (s *plainJSON) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start, ascii := s.i, true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// literal consumes the word (true, false or null) if it comes next.
func (s *plainJSON) literal(word string) bool {
	s.skipSpace()
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// nullableStr reads a string or null; null reads as "", as the wire types
// decode it for every string field of a job.
func (s *plainJSON) nullableStr() ([]byte, bool) {
	if s.literal("null") {
		return nil, true
	}
	return s.str()
}

// boolean reads true or false.
func (s *plainJSON) boolean() (v, ok bool) {
	if s.literal("true") {
		return true, true
	}
	return false, s.literal("false")
}

// count reads a count spelt as plainCount reads it: up to 18 decimal
// digits, which cannot overflow, without a leading zero (invalid JSON),
// sign, fraction or exponent.
func (s *plainJSON) count() (int64, bool) {
	s.skipSpace()
	start := s.i
	var n int64
	for ; s.i < len(s.b) && s.b[s.i]-'0' <= 9; s.i++ {
		n = n*10 + int64(s.b[s.i]-'0')
	}
	digits := s.i - start
	switch {
	case digits == 0 || digits > 18 || (digits > 1 && s.b[start] == '0'):
		return 0, false
	case s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E'):
		return 0, false
	}
	return n, true
}

// object reads an object, calling member for each key, which must then read
// the value. member returns the bit that marks its key among the object's
// known ones, or 0 for an unknown key; a key seen twice declines too.
func (s *plainJSON) object(member func(key []byte) uint) (seen uint, ok bool) {
	if !s.next('{') {
		return 0, false
	}
	if s.next('}') {
		return 0, true
	}
	for {
		key, ok := s.str()
		if !ok || !s.next(':') {
			return 0, false
		}
		bit := member(key)
		if bit == 0 || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		if !s.next(',') {
			return seen, s.next('}')
		}
	}
}

// Bits of the keys of a row or of totals.
const (
	keyPath uint = 1 << iota
	keyHuman
	keyAI
	keyTotal
)

// countsRow reads a row of a views or visitors page, or its totals (which
// have no path), into row. sumIfAbsent gives an absent total the value
// human + ai, as views define it; visitors leave it zero.
func (s *plainJSON) countsRow(row *PageView, withPath, sumIfAbsent bool) bool {
	seen, ok := s.object(func(key []byte) uint {
		switch string(key) {
		case "path":
			if withPath {
				return s.stringField(&row.Path, keyPath)
			}
		case "human":
			return s.countField(&row.Human, keyHuman)
		case "ai":
			return s.countField(&row.AI, keyAI)
		case "total":
			return s.countField(&row.Total, keyTotal)
		}
		return 0
	})
	if ok && seen&keyTotal == 0 && sumIfAbsent {
		row.Total = row.Human + row.AI // the wire types' rule, overflow included
	}
	return ok
}

// stringField reads a string, or null as "", into dst, and returns bit; 0
// when the value is neither.
func (s *plainJSON) stringField(dst *string, bit uint) uint {
	v, ok := s.nullableStr()
	if !ok {
		return 0
	}
	*dst = string(v)
	return bit
}

// countField reads a count into dst, and returns bit; 0 when the value is
// not a plain count.
func (s *plainJSON) countField(dst *int64, bit uint) uint {
	n, ok := s.count()
	if !ok {
		return 0
	}
	*dst = n
	return bit
}

// rowScratch holds the rows of a page while it is read, so that its slice is
// allocated once, at its final length.
var rowScratch = sync.Pool{New: func() any { return new([]PageView) }}

// maxScratchRows bounds the scratch slices kept for reuse.
const maxScratchRows = 4096

// Bits of a page's keys.
const (
	keyTotals uint = 1 << iota
	keyRows
	keyHasMore
)

// countsPage reads a views or visitors page, whose rows are under rowsKey,
// and hands its rows to keep, which must copy them. It declines unless
// totals, the rows and hasMore are all there, as the wire types require.
func countsPage(data []byte, rowsKey string, sumIfAbsent bool, keep func(totals PageView, rows []PageView, hasMore bool)) bool {
	buf := rowScratch.Get().(*[]PageView)
	defer func() {
		clear(*buf) // the pool must not keep the paths alive
		if cap(*buf) <= maxScratchRows {
			*buf = (*buf)[:0]
			rowScratch.Put(buf)
		}
	}()
	s := &plainJSON{b: data}
	var totals PageView
	var hasMore bool
	seen, ok := s.object(func(key []byte) uint {
		switch string(key) {
		case "totals":
			if s.countsRow(&totals, false, sumIfAbsent) {
				return keyTotals
			}
		case "hasMore":
			var ok bool
			if hasMore, ok = s.boolean(); ok {
				return keyHasMore
			}
		case rowsKey:
			if s.rows(buf, sumIfAbsent) {
				return keyRows
			}
		}
		return 0
	})
	if !ok || seen != keyTotals|keyRows|keyHasMore || !s.end() {
		return false
	}
	keep(totals, *buf, hasMore)
	return true
}

// rows reads an array of rows into *buf.
func (s *plainJSON) rows(buf *[]PageView, sumIfAbsent bool) bool {
	if !s.next('[') {
		return false
	}
	if s.next(']') {
		return true
	}
	for {
		*buf = append(*buf, PageView{})
		if !s.countsRow(&(*buf)[len(*buf)-1], true, sumIfAbsent) {
			return false
		}
		if !s.next(',') {
			return s.next(']')
		}
	}
}

func (p *ViewsPage) decodeFast(data []byte) bool {
	return countsPage(data, "views", true, func(totals PageView, rows []PageView, hasMore bool) {
		*p = ViewsPage{
			Totals:  ViewCounts{Human: totals.Human, AI: totals.AI, Total: totals.Total},
			Views:   append(make([]PageView, 0, len(rows)), rows...),
			HasMore: hasMore,
		}
	})
}

func (p *VisitorsPage) decodeFast(data []byte) bool {
	return countsPage(data, "visitors", false, func(totals PageView, rows []PageView, hasMore bool) {
		page := VisitorsPage{
			Totals:   VisitorCounts{Human: totals.Human, AI: totals.AI, Total: totals.Total},
			Visitors: make([]PageVisitors, len(rows)),
			HasMore:  hasMore,
		}
		for i, r := range rows {
			page.Visitors[i] = PageVisitors(r)
		}
		*p = page
	})
}

// Bits of a job's keys, and of its source's.
const (
	keyID uint = 1 << iota
	keyStatus
	keySource
	keyModel
	keyPRLink
	keyCreatedAt
	keyArchivedAt
)

const (
	keyRepository uint = 1 << iota
	keyRef
)

func (j *Job) decodeFast(data []byte) bool {
	s := &plainJSON{b: data}
	var job Job
	var created, archived []byte
	_, ok := s.object(func(key []byte) uint {
		var ok bool
		switch string(key) {
		case "id":
			return s.stringField(&job.ID, keyID)
		case "status":
			var v []byte
			if v, ok = s.nullableStr(); ok {
				job.Status = jobStatus(v)
				return keyStatus
			}
		case "source":
			if s.source(&job.Source) {
				return keySource
			}
		case "model":
			return s.stringField(&job.Model, keyModel)
		case "prLink":
			return s.stringField(&job.PRLink, keyPRLink)
		case "createdAt":
			if created, ok = s.nullableStr(); ok {
				return keyCreatedAt
			}
		case "archivedAt":
			if archived, ok = s.nullableStr(); ok {
				return keyArchivedAt
			}
		}
		return 0
	})
	if !ok || !s.end() {
		return false
	}
	if job.CreatedAt, ok = jobTime("createdAt", created); !ok {
		return false
	}
	if job.ArchivedAt, ok = jobTime("archivedAt", archived); !ok {
		return false
	}
	*j = job
	return true
}

// jobTime reads a job's timestamp with the wire types' own parsing, so that
// every form reads the same; one it refuses goes back to them for the
// error. Null and "" are the zero time.
func jobTime(field string, v []byte) (time.Time, bool) {
	if len(v) == 0 {
		return time.Time{}, true
	}
	s := string(v)
	t, err := parseTimestamp("job", field, &s)
	return t, err == nil
}

// source reads a job's source, or null.
func (s *plainJSON) source(src *JobSource) bool {
	if s.literal("null") {
		return true
	}
	_, ok := s.object(func(key []byte) uint {
		switch string(key) {
		case "repository":
			return s.stringField(&src.Repository, keyRepository)
		case "ref":
			return s.stringField(&src.Ref, keyRef)
		}
		return 0
	})
	return ok
}

// jobStatus returns the documented statuses without allocating a copy.
func jobStatus(v []byte) JobStatus {
	switch string(v) {
	case string(JobStatusActive):
		return JobStatusActive
	case string(JobStatusCompleted):
		return JobStatusCompleted
	case string(JobStatusArchived):
		return JobStatusArchived
	case string(JobStatusFailed):
		return JobStatusFailed
	}
	return JobStatus(v)
}
