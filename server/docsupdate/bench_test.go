package docsupdate_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/docsupdate"
	"github.com/docsapi/docsapi-go/server/gitrepo"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// corpusFiles is storetest's corpus of n pages written as the MDX files
// of a repository.
func corpusFiles(n int) map[string]string {
	files := map[string]string{}
	for _, p := range storetest.DocsCorpus(n) {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntitle: %s\ndescription: %s\n---\n\n", p.Title, p.Description)
		for _, s := range p.Sections {
			if s.Heading != "" {
				fmt.Fprintf(&b, "## %s\n\n", s.Heading)
			}
			b.WriteString(s.Text + "\n\n")
			if s.Code != "" {
				b.WriteString("```go\n" + s.Code + "\n```\n\n")
			}
		}
		files[p.File] = b.String()
	}
	return files
}

// timedReader measures the reads (the fetch through the mirror and the
// files read), so that the re-index after them is reported apart.
type timedReader struct {
	inner docsupdate.TreeReader
	mu    sync.Mutex
	spent time.Duration
}

func (r *timedReader) ReadTree(ctx context.Context, repository string, spec gitrepo.TreeSpec) (*gitrepo.Tree, error) {
	start := time.Now()
	defer func() { r.mu.Lock(); r.spent += time.Since(start); r.mu.Unlock() }()
	return r.inner.ReadTree(ctx, repository, spec)
}

func (r *timedReader) take() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.spent
	r.spent = 0
	return d
}

func benchUpdater(b *testing.B, e *env, reader *timedReader) *docsupdate.Updater {
	u, err := docsupdate.New(docsupdate.Config{Store: e.st, Owner: "bench", Now: e.clock.Now, RefreshInterval: -1,
		Trees: func(context.Context, store.Project) (docsupdate.TreeReader, error) { return reader, nil }})
	if err != nil {
		b.Fatal(err)
	}
	return u
}

func runUpdate(b *testing.B, e *env, u *docsupdate.Updater) store.DocsUpdateRecord {
	rec, err := u.Queue(b.Context(), "alpha", store.DocsTriggerAPI)
	if err != nil {
		b.Fatal(err)
	}
	if ran, err := u.RunOne(b.Context()); !ran || err != nil {
		b.Fatalf("RunOne: %v %v", ran, err)
	}
	got, err := e.st.DocsUpdate(b.Context(), rec.ID)
	if err != nil || got.Status != store.DocsUpdateSuccess {
		b.Fatalf("update: %+v, %v", got, err)
	}
	return got
}

// BenchmarkFirstIndex5000 is the first index of a repository of 5,000
// pages end to end: the clone into the mirror, every file read, parsed
// and written to a new SQLite index. after-read-ms is the part after the
// reads.
func BenchmarkFirstIndex5000(b *testing.B) {
	files := corpusFiles(5000)
	for b.Loop() {
		b.StopTimer()
		e := newEnv(b, files)
		reader := &timedReader{inner: e.reader.inner}
		u := benchUpdater(b, e, reader)
		b.StartTimer()
		start := time.Now()
		runUpdate(b, e, u)
		total := time.Since(start)
		b.ReportMetric(float64((total - reader.take()).Milliseconds()), "after-read-ms")
	}
}

// BenchmarkUpdateOneFile5000 is an update of an index of 5,000 pages
// after a commit that changes one page: the fetch, one file read, one
// page written. after-read-ms is the part after the fetch and the read.
func BenchmarkUpdateOneFile5000(b *testing.B) {
	e := newEnv(b, corpusFiles(5000))
	reader := &timedReader{inner: e.reader.inner}
	u := benchUpdater(b, e, reader)
	runUpdate(b, e, u)
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		e.repo.commit("Change one page", map[string]string{"section-07/page-00007.mdx": fmt.Sprintf("# Page seven\n\nRevision %d.\n", i)})
		reader.take()
		b.StartTimer()
		start := time.Now()
		got := runUpdate(b, e, u)
		total := time.Since(start)
		if len(got.Commit.Modified) != 1 {
			b.Fatalf("update changed %+v", got.Commit)
		}
		b.ReportMetric(float64((total - reader.take()).Milliseconds()), "after-read-ms")
	}
}
