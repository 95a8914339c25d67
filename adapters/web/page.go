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
	sub, _ := fs.Sub(pageFiles, "page")
	files := http.FileServerFS(sub)
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	}))
}
