//go:build go1.26

package servertest

import "testing"

// artifactDir is a folder for the test's output files: kept under
// -outputdir with go test -artifacts, temporary otherwise.
func artifactDir(t *testing.T) string { return t.ArtifactDir() }
