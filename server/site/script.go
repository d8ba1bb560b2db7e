package site

import (
	_ "embed"
	"net/http"
)

// script is the script a documentation site's pages load to send
// feedback and searches (see its header for how to embed it).
//
//go:embed docsapi.js
var script []byte

// style is the feedback widget's default stylesheet, which the script
// adds to the page (see its header for how a site restyles the widget).
//
//go:embed docsapi.css
var style []byte

// serveScript: GET /v1/site/{projectId}/docsapi.js. The script is the
// same for every project (it reads the project from its own URL), so it
// needs no lookup and caches well; it may be loaded by pages of any origin,
// and runs only where a page includes it.
func serveScript(w http.ResponseWriter, _ *http.Request) {
	serveAsset(w, "text/javascript; charset=utf-8", script)
}

// serveStyle: GET /v1/site/{projectId}/docsapi.css, the same for every
// project, as the script is.
func serveStyle(w http.ResponseWriter, _ *http.Request) {
	serveAsset(w, "text/css; charset=utf-8", style)
}

// serveAsset answers a file that pages of any origin may load.
func serveAsset(w http.ResponseWriter, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	w.Write(body)
}
