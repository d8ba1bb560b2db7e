// Package api holds the API's contract as an OpenAPI 3 document: the
// operations the hosted service documents, plus the self-hosted server's
// additions, each marked with the extension x-self-hosted. The document is
// embedded so that the server can serve it and tests can validate real
// responses against it without reading files at run time.
package api

import (
	"bytes"
	_ "embed"
)

//go:embed openapi.yaml
var document []byte

// OpenAPI returns the OpenAPI 3 document (YAML) describing the API. It
// returns a fresh copy on every call, so a caller may change it freely
// without affecting other callers or the embedded original.
func OpenAPI() []byte {
	return bytes.Clone(document)
}
