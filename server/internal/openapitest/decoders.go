package openapitest

import "github.com/getkin/kin-openapi/openapi3filter"

// The site script is served as text/javascript, a type kin-openapi has no
// decoder for, so it would fail every check of the script. Its schema is a
// string, which the plain-text decoder gives. The registry is global, but
// only test binaries import this package, and no other decoder is replaced.
func init() {
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.PlainBodyDecoder)
}
