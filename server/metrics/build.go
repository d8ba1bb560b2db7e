package metrics

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// serverModule is the module whose version docsapi_build_info reports
// when Config.Version is empty.
const serverModule = "github.com/docsapi/docsapi-go/server"

// unknown is a build label's value when the binary does not record it.
const unknown = "unknown"

// buildInfo is the docsapi_build_info gauge: always 1, its labels saying
// which build runs, as Prometheus' own *_build_info metrics do, so that a
// query can join them onto other series or count the versions running.
func buildInfo(version string) prometheus.Collector {
	bi, _ := debug.ReadBuildInfo()
	labels := buildLabels(bi, version)
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "docsapi_build_info",
		Help:        "Always 1; its labels say which build of the server runs: version, the Go version it was built with (goversion) and the commit (revision, with -modified for a tree with changes; unknown where the build did not record it).",
		ConstLabels: labels,
	})
	g.Set(1)
	return g
}

// buildLabels are docsapi_build_info's labels for the build bi describes
// (nil where the binary records none): version, if given, else the server
// module's version, as the main module or a dependency.
func buildLabels(bi *debug.BuildInfo, version string) prometheus.Labels {
	revision := unknown
	goVersion := runtime.Version()
	if bi != nil {
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		if version == "" {
			version = moduleVersion(bi)
		}
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			revision = rev
			if modified {
				revision += "-modified"
			}
		}
	}
	if version == "" {
		version = unknown
	}
	return prometheus.Labels{"version": version, "goversion": goVersion, "revision": revision}
}

// moduleVersion is the server module's version in bi, "" if unknown (a
// build of a checkout says "(devel)").
func moduleVersion(bi *debug.BuildInfo) string {
	m := &bi.Main
	if m.Path != serverModule {
		m = nil
		for _, d := range bi.Deps {
			if d.Path == serverModule {
				m = d
				if d.Replace != nil && d.Replace.Version != "" {
					m = d.Replace
				}
				break
			}
		}
	}
	if m == nil || m.Version == "(devel)" {
		return ""
	}
	return m.Version
}
