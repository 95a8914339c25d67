package connect

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"time"

	"github.com/neobot/neobot/core/mcp"
)

// Logins finishes MCP server logins: the tool surface.
type Logins interface {
	FinishLogin(ctx context.Context, state, code, iss string) (alias, user string, err error)
}

var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>neobot: {{.Title}}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem">
<h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

// writePage answers a browser with a page written for the person in it.
func writePage(w http.ResponseWriter, status int, title, text string) {
	noStore(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = callbackPage.Execute(w, struct{ Title, Text string }{title, text})
}

// Callback completes an MCP server login (the OAuth redirect's target on
// the ops listener). A person's own login completes only back in the
// browser that proved to be that person (links; nil when no links are
// made). It never shows the code, the state or a token, and its
// errors are written for the person in the browser.
func Callback(l Logins, links *Links) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("error") != "" {
			writePage(w, http.StatusBadRequest, "Not connected", "The authorization server did not grant access ("+q.Get("error")+"). Start the login again if you meant to.")
			return
		}
		// Admitted, a person's login goes straight on to complete: nothing
		// between admit and FinishLogin may return.
		who, person, refusal := links.admit(r, q.Get("state"))
		if refusal != "" {
			writePage(w, http.StatusForbidden, "Not connected", refusal)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		alias, _, err := l.FinishLogin(ctx, q.Get("state"), q.Get("code"), q.Get("iss"))
		switch {
		case errors.Is(err, mcp.ErrUnproven):
			writePage(w, http.StatusForbidden, "Not connected", "This login was not started from your link in this browser, so nothing was connected. Open the link Neo sent you, in the browser you sign in with.")
		case errors.Is(err, mcp.ErrUnknownLogin):
			writePage(w, http.StatusBadRequest, "Link expired", "This login link has expired or was already used. Start the login again.")
		case err != nil:
			writePage(w, http.StatusBadGateway, "Not connected", "Connecting "+alias+" failed: the authorization server refused the code. Start the login again.")
		case person:
			writePage(w, http.StatusOK, "Connected", who.name+" is connected to "+alias+": Neo uses this account only when they ask. You can close this tab.")
		default:
			writePage(w, http.StatusOK, "Connected", "neobot is connected to "+alias+". You can close this tab.")
		}
	}
}

// noStore keeps a page and its redirect out of caches and referrers.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
}
