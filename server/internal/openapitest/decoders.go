package openapitest

import "github.com/getkin/kin-openapi/openapi3filter"

// The site script is served as text/javascript, the widget's stylesheet
// as text/css and the assistant's answers as text/event-stream, types
// kin-openapi has no decoder for, so they would fail every check of them.
// Their schemas are strings, which the plain-text decoder gives. The
// registry is global, but only test binaries import this package, and no
// other decoder is replaced.
func init() {
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/css", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
}
