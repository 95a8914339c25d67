package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed openapi.json
var openAPI []byte

//go:embed page
var pageFiles embed.FS

// page serves the chat page: index.html at /, its script and style
// beside it. The files are embedded; nothing is built.
func page(mux *http.ServeMux) {
	files := http.FileServerFS(pageFS())
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pageHeaders(w)
		files.ServeHTTP(w, r)
	}))
}

// pageFS is the page's files.
func pageFS() fs.FS {
	sub, _ := fs.Sub(pageFiles, "page")
	return sub
}

// pageHeaders keeps a page to its own site's script and style, out of
// frames, and its address out of referrers.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}
