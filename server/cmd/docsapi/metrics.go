package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/connlimit"
	"github.com/docsapi/docsapi-go/server/engine"
	"github.com/docsapi/docsapi-go/server/metrics"
	"github.com/docsapi/docsapi-go/server/pageviews"
	"github.com/docsapi/docsapi-go/server/store"
)

// newServeMetrics makes serve's metrics and hooks them into the
// configurations of the engine, the recorder, the API server and the
// connection limiter, which are made from them afterwards.
func newServeMetrics(st store.Store, log *slog.Logger, eng *engine.Config, rec *pageviews.Config, srv *server.Config, conns *connlimit.Config) (*metrics.Metrics, error) {
	jobs, _ := st.(store.JobCounter) // both backends count their jobs
	m, err := metrics.New(metrics.Config{Jobs: jobs, Logger: log, Version: cliVersion()})
	if err != nil {
		return nil, err
	}
	eng.OnRunEnd, rec.OnFlush = m.ObserveRun, m.ObserveFlush
	srv.OnRequest, srv.OnIngestCommit, srv.OnSiteLimit = m.ObserveRequest, m.ObserveIngestCommit, m.ObserveSiteLimit
	srv.OnPublicRequest, srv.OnSignIn = m.ObservePublicRequest, m.ObserveSignIn
	conns.OnRefuse = m.ObserveRefusal
	return m, nil
}

// serveMetrics serves GET /metrics on the metrics address, on a listener
// of its own: the API's may face the internet, and metrics need no key.
func serveMetrics(set *serveSettings, m *metrics.Metrics, log *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", set.metricsListen)
	if err != nil {
		return nil, fmt.Errorf("listening for metrics on %s (from %s): %w", set.metricsListen, set.sources["metricsListen"], err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := newHTTPServer(mux, log, defaultHTTPTimeouts)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("docsapi: the metrics server stopped", slog.Any("error", err))
		}
	}()
	log.Info("docsapi: metrics listening", slog.String("addr", ln.Addr().String()),
		slog.String("url", "http://"+ln.Addr().String()+"/metrics"))
	return srv, nil
}
