//go:build !go1.26

package servertest

import "testing"

// artifactDir is a folder for the test's output files. Before Go 1.26,
// which has testing.T.ArtifactDir, a temporary one.
func artifactDir(t *testing.T) string { return t.TempDir() }
