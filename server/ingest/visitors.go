package ingest

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode"

	"github.com/docsapi/docsapi-go/server/internal/hll"
	"github.com/docsapi/docsapi-go/server/internal/visitorhash"
	"github.com/docsapi/docsapi-go/server/store"
)

// maxIngestVisitor bounds an ingested view's visitor key: room for a
// session ID or a hex digest, not for a payload.
const maxIngestVisitor = 256

// visitorsSink is where ingested visitors go: store.Store satisfies it
// once it keeps visitors; a store that does not counts views alone.
type visitorsSink interface {
	AddVisitors(ctx context.Context, counts []store.VisitorCount) error
	VisitorSalt(ctx context.Context, day time.Time) ([]byte, error)
}

// visitorProblem says what makes an ingested visitor key unfit, or "".
// Keys are hashed, never stored, but a control character in one is a
// client's bug (a key cut from a log line with its newline) better told.
func visitorProblem(key string) string {
	switch {
	case key == "":
		return "is empty; omit it to count no visitor"
	case len(key) > maxIngestVisitor:
		return fmt.Sprintf("has %d bytes; at most %d are allowed", len(key), maxIngestVisitor)
	}
	for i, c := range key {
		if unicode.IsControl(c) {
			return fmt.Sprintf("holds a control character (%U) at byte %d", c, i)
		}
	}
	return ""
}

// ingestVisitor is a view's visitor, until hashed: its key, the day of its
// view, and where its view was counted (counts[count], class 0 human or
// 1 AI).
type ingestVisitor struct {
	key   string
	at    time.Time
	count int
	class int
}

// ingestSalts keeps the salts of the days ingested views fall on, fetched
// from the store on first use: the days around today only, since a view
// of an older day counts no visitor.
type ingestSalts struct {
	mu    sync.Mutex
	byDay map[int64]*visitorhash.Salt
}

// get returns the salt of at's day, or nil if that day is not yesterday,
// today or tomorrow (UTC, by now): a view of an older day counts no
// visitor, its day's salt being gone by design.
func (s *ingestSalts) get(ctx context.Context, sink visitorsSink, now, at time.Time) (*visitorhash.Salt, error) {
	day, today := visitorhash.DayOf(at), visitorhash.DayOf(now)
	if day < today-86400 || day > today+86400 {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for d := range s.byDay {
		if d < today-86400 {
			delete(s.byDay, d) // over: forgotten, as the store forgets it
		}
	}
	if salt := s.byDay[day]; salt != nil {
		return salt, nil
	}
	secret, err := sink.VisitorSalt(ctx, at)
	if err != nil {
		return nil, err
	}
	if len(secret) == 0 {
		return nil, fmt.Errorf("the store returned an empty visitor salt for %s", at.UTC().Format(time.DateOnly))
	}
	salt := visitorhash.New(at, secret)
	if s.byDay == nil {
		s.byDay = map[int64]*visitorhash.Salt{}
	}
	s.byDay[day] = salt
	return salt, nil
}

// hashVisitors turns the visitors of one request into encoded sketches,
// one VisitorCount per count that has visitors. The keys are hashed with
// their day's salt and the project, and dropped: only sketches leave.
func (c *groupCommitter) hashVisitors(ctx context.Context, project string, counts []store.ViewCount, visitors []ingestVisitor, now time.Time) ([]store.VisitorCount, error) {
	if c.visitors == nil || len(visitors) == 0 {
		return nil, nil
	}
	sketches := make(map[int]*[2]hll.Sketch)
	for _, v := range visitors {
		salt, err := c.salts.get(ctx, c.visitors, now, v.at)
		if err != nil {
			return nil, err
		}
		if salt == nil {
			continue
		}
		sk := sketches[v.count]
		if sk == nil {
			sk = new([2]hll.Sketch)
			sketches[v.count] = sk
		}
		sk[v.class].Insert(salt.Key(project, v.key))
	}
	out := make([]store.VisitorCount, 0, len(sketches))
	for i := range counts {
		if sk := sketches[i]; sk != nil {
			out = append(out, store.VisitorCount{ProjectID: project, Path: counts[i].Path, Hour: counts[i].Hour,
				Human: encodeSketch(&sk[0]), AI: encodeSketch(&sk[1])})
		}
	}
	return out, nil
}

// encodeSketch is the encoding of s, or nil if it is empty.
func encodeSketch(s *hll.Sketch) []byte {
	if s.Estimate() == 0 {
		return nil
	}
	return s.AppendBinary(nil)
}

// mergeVisitors merges the group's visitors of the same project, path and
// hour, so that the commit writes each row once.
func mergeVisitors(group []*viewsBatch) ([]store.VisitorCount, error) {
	type key struct {
		project, path string
		hour          int64
	}
	at := map[key]int{}
	var out []store.VisitorCount
	var sketches [][2]*hll.Sketch // those merged into, by index of out
	for _, b := range group {
		for _, vc := range b.visitors {
			k := key{vc.ProjectID, vc.Path, vc.Hour.Unix()}
			i, ok := at[k]
			if !ok {
				at[k] = len(out)
				out = append(out, vc)
				sketches = append(sketches, [2]*hll.Sketch{})
				continue
			}
			for class, add := range [...][]byte{vc.Human, vc.AI} {
				if len(add) == 0 {
					continue
				}
				s := sketches[i][class]
				if s == nil {
					s = new(hll.Sketch)
					sketches[i][class] = s
					if have := [...][]byte{out[i].Human, out[i].AI}[class]; len(have) > 0 {
						if err := s.UnmarshalBinary(have); err != nil {
							return nil, err
						}
					}
				}
				if err := s.MergeBinary(add); err != nil {
					return nil, err
				}
			}
		}
	}
	for i, sk := range sketches {
		if sk[0] != nil {
			out[i].Human = encodeSketch(sk[0])
		}
		if sk[1] != nil {
			out[i].AI = encodeSketch(sk[1])
		}
	}
	return out, nil
}
