package server

import "net/http"

// routeMux is the server's ServeMux, which remembers the patterns it was
// given. ServeMux.Handler may report a path as a pattern (that of its
// redirect to the path with a trailing slash), and a route's label must
// never come from the request.
type routeMux struct {
	*http.ServeMux
	patterns map[string]bool
}

func newRouteMux() *routeMux {
	return &routeMux{ServeMux: http.NewServeMux(), patterns: map[string]bool{}}
}

// Handle registers h for pattern, as ServeMux.Handle does.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.ServeMux.Handle(pattern, h)
	m.patterns[pattern] = true
}

// HandleFunc registers h for pattern, as ServeMux.HandleFunc does.
func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// registered returns pattern if it is one of the routes, else "".
func (m *routeMux) registered(pattern string) string {
	if m.patterns[pattern] {
		return pattern
	}
	return ""
}
