package docsapi

import (
	"io"
	"net/http"
	"sync"
)

// Response bodies are read into buffers reused across requests. io.ReadAll,
// which does not know the size in advance, reads into chunks of growing size
// and copies them into a final slice: several allocations per response and
// about twice the body's size in garbage.
//
// A buffer goes back to the pool as soon as the body has been turned into a
// result or an error, so nothing may keep a reference into it. Everything
// that reads it copies what it keeps: newAPIError converts to strings,
// encoding/json copies strings and json.RawMessage values out of its input,
// and bodyDecoder implementations must not retain their input either
// (bodybuf_test.go checks each kind of result).

// maxPooledBody bounds the buffers kept for reuse: one rare large body
// should not keep its memory alive in the pool.
const maxPooledBody = 1 << 20

var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// readBody reads a body of at most maxResponseBytes into a pooled buffer and
// closes it, so the connection can be reused. The caller owns the returned
// buffer and hands it back with releaseBody once nothing refers to it.
func readBody(resp *http.Response) (*[]byte, error) {
	defer resp.Body.Close()
	buf := bodyPool.Get().(*[]byte)
	b := (*buf)[:0]
	// A known length sizes the buffer at once. It is only a hint: the body
	// is still read to EOF and bounded below. The extra byte leaves room
	// for the read that reports EOF, so a full buffer is not grown for it.
	if n := resp.ContentLength; n >= 0 && n <= maxResponseBytes && int(n) >= cap(b) {
		b = make([]byte, 0, n+1)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grows as append does, amortised
		}
		// Never ask for more than one byte past the bound: that byte is
		// enough to tell an oversized body, without downloading the rest.
		n, err := resp.Body.Read(b[len(b):min(cap(b), maxResponseBytes+1)])
		b = b[:len(b)+n]
		*buf = b // keeps the grown array for the pool
		switch {
		case len(b) > maxResponseBytes:
			releaseBody(buf)
			return nil, errBodyTooLarge
		case err == nil:
		case err == io.EOF:
			return buf, nil
		default:
			releaseBody(buf)
			return nil, err
		}
	}
}

// releaseBody returns a buffer from readBody to the pool.
func releaseBody(buf *[]byte) {
	if cap(*buf) <= maxPooledBody {
		bodyPool.Put(buf)
	}
}
