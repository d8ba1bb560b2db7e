package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/store"
)

// DocsCorpus returns n generated pages of a documentation site, the same
// for every call: six sections of about a hundred words each, a third of
// them with a code block, words drawn from a vocabulary of a few thousand
// with a skew as in prose. Backends' benchmarks index and search it.
func DocsCorpus(n int) []store.DocPage {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := docsVocabulary(r, 3000)
	word := func() string {
		// Squaring skews towards the first words, as prose repeats its
		// common words.
		f := r.Float64()
		return vocab[int(f*f*float64(len(vocab)))]
	}
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	pages := make([]store.DocPage, n)
	for i := range pages {
		p := store.DocPage{
			Path: fmt.Sprintf("/section-%02d/page-%05d", i%40, i), File: fmt.Sprintf("section-%02d/page-%05d.mdx", i%40, i),
			Title: words(3), Description: words(12), Groups: []string{fmt.Sprintf("Section %d", i%40)},
		}
		for j := range 6 {
			s := store.DocSection{Anchor: fmt.Sprintf("part-%d", j), Heading: words(3), Text: words(80 + r.IntN(40))}
			if j == 0 {
				s.Anchor, s.Heading = "", ""
			}
			if r.IntN(3) == 0 {
				s.Code = "client." + word() + "(" + word() + ", " + word() + ")\n" + words(15)
			}
			p.Sections = append(p.Sections, s)
		}
		pages[i] = p
	}
	return pages
}

// DocsQueries returns n queries of one to three words of DocsCorpus, the
// last cut short now and then, as typed.
func DocsQueries(n int) []string {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := docsVocabulary(rand.New(rand.NewPCG(1, 2)), 3000)
	qs := make([]string, n)
	for i := range qs {
		var ws []string
		for range 1 + r.IntN(3) {
			f := r.Float64()
			ws = append(ws, vocab[int(f*f*float64(len(vocab)))])
		}
		if last := ws[len(ws)-1]; r.IntN(2) == 0 && len(last) > 4 {
			ws[len(ws)-1] = last[:len(last)-2]
		}
		qs[i] = strings.Join(ws, " ")
	}
	return qs
}

// docsVocabulary makes n pronounceable words of 4 to 10 letters.
func docsVocabulary(r *rand.Rand, n int) []string {
	const consonants, vowels = "bcdfghklmnprstvw", "aeiou"
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < n {
		var b strings.Builder
		for range 2 + r.IntN(4) {
			b.WriteByte(consonants[r.IntN(len(consonants))])
			b.WriteByte(vowels[r.IntN(len(vowels))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return vocab
}

// BenchmarkDocs measures a backend's index on DocsCorpus(5000): the first
// index of every page in one update, and a search (ten hits, snippets
// made) once it is indexed. open returns a new, empty store.
func BenchmarkDocs(b *testing.B, open func(b *testing.B) store.Store) {
	pages := DocsCorpus(5000)
	var files []store.DocFile
	for _, p := range pages {
		files = append(files, store.DocFile{Path: p.File, Blob: "blob:" + p.File})
	}
	index := func(b *testing.B, s store.Store) {
		if err := s.UpdateDocs(b.Context(), store.DocsUpdate{ProjectID: "p1", Commit: "c1", At: At(0), Files: files, Pages: pages, Replace: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("FirstIndex/pages=5000", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := open(b)
			if err := s.CreateProject(b.Context(), NewProject("p1")); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			index(b, s)
		}
	})
	b.Run("Search/pages=5000", func(b *testing.B) {
		s := open(b)
		if err := s.CreateProject(b.Context(), NewProject("p1")); err != nil {
			b.Fatal(err)
		}
		index(b, s)
		queries := DocsQueries(200)
		hits, i := 0, 0
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			found, err := s.SearchDocs(b.Context(), store.DocsQuery{ProjectID: "p1", Query: queries[i%len(queries)], Limit: 10})
			took = append(took, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			hits += len(found)
			i++
		}
		b.ReportMetric(float64(hits)/float64(i), "hits/op")
		// The target is a median, which a few slow queries would hide in
		// the mean; the 95th percentile shows those few.
		slices.Sort(took)
		quantile := func(q float64) float64 {
			return float64(took[int(q*float64(len(took)-1))]) / float64(time.Millisecond)
		}
		b.ReportMetric(quantile(0.5), "p50-ms")
		b.ReportMetric(quantile(0.95), "p95-ms")
	})
}
