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

// serveScript: GET /v1/site/{projectId}/docsapi.js. The script is the
// same for every project (it reads the project from its own URL), so it
// needs no lookup and caches well; it may be loaded by pages of any origin,
// and runs only where a page includes it.
func serveScript(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	w.Write(script)
}
