package pageviews

import (
	"errors"
	"net/http"
	"strings"
	"sync"
)

// MiddlewareConfig says what the middleware counts.
type MiddlewareConfig struct {
	// Project is the project the views are counted for. Required.
	Project string
	// Normalize maps a request path to the page it shows, so that
	// "/guide/", "/guide/index.html" and "/guide.md" count as one page.
	// NormalizePath if nil.
	Normalize func(path string) string
	// IsPage tells pages from assets (styles, scripts, images, fonts).
	// IsPage (the function) if nil.
	IsPage func(path string) bool
}

// Middleware returns a middleware that counts one view for every successful
// page response of the wrapped handler: a GET answered 2xx (but not 204 or
// 206), of a page rather than an asset, that is not a prefetch. It does not
// change the response or hold it back: the view is counted after the
// handler returns. When the Recorder counts visitors, a view of a human or
// an AI also counts its visitor: the client's address (see
// Config.TrustedProxies) and user agent, hashed with the day's salt.
func (r *Recorder) Middleware(cfg MiddlewareConfig) (func(http.Handler) http.Handler, error) {
	if cfg.Project == "" {
		return nil, errors.New("pageviews: MiddlewareConfig.Project is empty")
	}
	if cfg.Normalize == nil {
		cfg.Normalize = NormalizePath
	}
	if cfg.IsPage == nil {
		cfg.IsPage = IsPage
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			path := req.URL.Path
			if req.Method != http.MethodGet || isPrefetch(req) || !cfg.IsPage(path) {
				next.ServeHTTP(w, req)
				return
			}
			sw := writerPool.Get().(*statusWriter)
			sw.ResponseWriter, sw.status = w, 0
			next.ServeHTTP(sw, req)
			status := sw.status
			sw.ResponseWriter = nil // do not keep the response alive in the pool
			writerPool.Put(sw)
			if status == 0 {
				status = http.StatusOK // nothing written: net/http answers 200
			}
			if status < 200 || status > 299 || status == http.StatusNoContent || status == http.StatusPartialContent {
				return
			}
			ua := headerOf(req, "User-Agent")
			class, agent := r.classes.ClassifyAgent(ua, path, headerOf(req, "Accept"))
			now := r.cfg.Now()
			var visitor uint64
			hasVisitor := false
			if r.visSink != nil && visitorClass(class) >= 0 {
				visitor, hasVisitor = r.visitorOf(cfg.Project, now, r.proxies.Addr(req), ua)
			}
			r.record(cfg.Project, cfg.Normalize(path), class, agent, now, 1, visitor, hasVisitor)
		})
	}, nil
}

// writerPool reuses status writers, so counting a view allocates nothing.
var writerPool = sync.Pool{New: func() any { return new(statusWriter) }}

// statusWriter remembers the status the handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps streaming handlers working through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isPrefetch recognises the headers browsers send for speculative loads,
// which are not views (a prefetched page may never be shown).
func isPrefetch(r *http.Request) bool {
	for _, name := range [...]string{"Sec-Purpose", "Purpose", "X-Purpose", "X-Moz"} {
		if v := headerOf(r, name); v != "" && (strings.Contains(v, "prefetch") || strings.Contains(v, "preview")) {
			return true
		}
	}
	return false
}

// headerOf is r.Header.Get of a name already in canonical form, as every
// name here is: net/http stores received headers under their canonical
// names, and Get would spend more time canonicalising the name again than
// on the lookup, six times a page request.
func headerOf(r *http.Request, canonical string) string {
	if v := r.Header[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// NormalizePath maps the forms of a page's path to one: the index file of a
// folder to the folder, a ".md", ".html" or ".htm" page to its name, and a
// trailing slash away (the root stays "/"). It allocates nothing: the
// result is always a part of path.
func NormalizePath(path string) string {
	if path == "" {
		return "/"
	}
	// Every suffix trimPageSuffix trims ends in one of these letters: most
	// paths end in another or in a slash, and skip its eight comparisons.
	if c := path[len(path)-1]; c == 'l' || c == 'm' || c == 'd' || c == 'x' {
		path = trimPageSuffix(path)
	}
	for len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	return path
}

// trimPageSuffix trims a folder's index file to the folder (its slash
// kept), then a page's ".html", ".htm", ".mdx" or ".md" from path.
func trimPageSuffix(path string) string {
	for _, index := range [...]string{"/index.html", "/index.htm", "/index.md", "/index.mdx"} {
		if strings.HasSuffix(path, index) {
			path = path[:len(path)-len(index)+1]
			break
		}
	}
	for _, ext := range [...]string{".html", ".htm", ".mdx", ".md"} {
		if strings.HasSuffix(path, ext) && len(path) > len(ext)+1 {
			return path[:len(path)-len(ext)]
		}
	}
	return path
}

// IsPage reports whether path names a page: no file extension in its last
// segment, a ".html", ".htm", ".md" or ".mdx" file, or an llms.txt file
// (which AI agents read in place of pages).
func IsPage(path string) bool {
	last := path[strings.LastIndexByte(path, '/')+1:]
	dot := strings.LastIndexByte(last, '.')
	if dot <= 0 { // no extension, or a dot file such as "/.well-known"
		return dot < 0
	}
	switch ext := last[dot:]; ext {
	case ".html", ".htm", ".md", ".mdx":
		return true
	case ".txt":
		return last == "llms.txt" || last == "llms-full.txt"
	}
	return false
}
