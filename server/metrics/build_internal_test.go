package metrics

import (
	"runtime/debug"
	"testing"
)

func TestBuildLabels(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}}
	for _, tt := range []struct {
		name    string
		bi      *debug.BuildInfo
		version string
		want    [3]string // version, goversion, revision
	}{
		{"no build information", nil, "", [3]string{unknown, "", unknown}},
		{"the version given wins", &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: serverModule, Version: "v1.2.3"}}, "v9.0.0",
			[3]string{"v9.0.0", "go1.99.1", unknown}},
		{"the server as the main module, from a checkout", &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: serverModule, Version: "(devel)"}, Settings: vcs}, "",
			[3]string{unknown, "go1.99.1", "0123456789abcdef0123456789abcdef01234567"}},
		{"installed at a version", &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: serverModule, Version: "v1.2.3"}}, "",
			[3]string{"v1.2.3", "go1.99.1", unknown}},
		{"a modified tree", &debug.BuildInfo{Main: debug.Module{Path: serverModule, Version: "v1.2.3"}, Settings: append(vcs, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "",
			[3]string{"v1.2.3", "", "0123456789abcdef0123456789abcdef01234567-modified"}},
		{"embedded by another program", &debug.BuildInfo{Main: debug.Module{Path: "example.com/site"}, Deps: []*debug.Module{
			{Path: "github.com/other/module", Version: "v5.0.0"}, {Path: serverModule, Version: "v1.4.0"}}}, "",
			[3]string{"v1.4.0", "", unknown}},
		{"embedded with a replacement", &debug.BuildInfo{Main: debug.Module{Path: "example.com/site"}, Deps: []*debug.Module{
			{Path: serverModule, Version: "v1.4.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.4.1-fork"}}}}, "",
			[3]string{"v1.4.1-fork", "", unknown}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := buildLabels(tt.bi, tt.version)
			if len(l) != 3 {
				t.Errorf("labels %v, want version, goversion and revision alone", l)
			}
			if l["version"] != tt.want[0] || (tt.want[1] != "" && l["goversion"] != tt.want[1]) || l["goversion"] == "" || l["revision"] != tt.want[2] {
				t.Errorf("labels %v, want version %q, goversion %q, revision %q", l, tt.want[0], tt.want[1], tt.want[2])
			}
		})
	}
}
