package metrics_test

import (
	"context"
	"log"
	"net/http"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/metrics"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// A host application hooks the metrics into the engine, the recorder and
// the server, and serves them on a listener apart from the API's.
func ExampleNew() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "docsapi.db")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	m, err := metrics.New(metrics.Config{Jobs: st})
	if err != nil {
		log.Fatal(err)
	}
	eng, err := engine.New(engine.Config{
		Store: st, Owner: "docs-host-1", OnRunEnd: m.ObserveRun,
		Parts: func(context.Context, store.Project) (engine.Parts, error) {
			return engine.Parts{}, nil // the host's repositories, agent and pull requests
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	rec, err := pageviews.New(pageviews.Config{Sink: st, OnFlush: m.ObserveFlush})
	if err != nil {
		log.Fatal(err)
	}
	m.WatchPageViews(rec)
	srv, err := server.New(server.Config{
		Store: st, Jobs: eng, PageViews: rec,
		OnRequest: m.ObserveRequest, OnIngestCommit: m.ObserveIngestCommit, OnSiteLimit: m.ObserveSiteLimit,
		OnPublicRequest: m.ObservePublicRequest, OnSignIn: m.ObserveSignIn,
	})
	if err != nil {
		log.Fatal(err)
	}
	eng.Start()
	rec.Start()
	go func() { log.Fatal(http.ListenAndServe("127.0.0.1:9464", m.Handler())) }()
	log.Fatal(http.ListenAndServe("localhost:8080", srv))
}
