// Package console is the operator console: a static page served at /admin
// on every community's host (embedded, no build step), which signs with
// the operator's NIP-07 browser extension (window.nostr) and calls the
// relay's NIP-86 methods (shared/transport/nip86) over NIP-98, its
// deep health check (GET /healthz?deep=1) and NIP-11, and publishes
// NIP-43 relay-membership commands (9030, 9031) on POST /events. It holds
// no secret and decides nothing: every action is a call the relay checks
// like any other (the door, guard.Manage), so a key that is not an
// operator gets the relay's refusal, which the page shows.
package console

import (
	"embed"
	"mime"
	"net/http"
	"path"
	"strings"
)

// Prefix is the console's path.
const Prefix = "/admin"

//go:embed static
var files embed.FS

// CSP is the console's Content-Security-Policy: its own script and style
// only, no inline code, fetches to its own origin only, not framed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' https: data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Serve answers a GET or HEAD of p (the route table routes /admin and
// /admin/... here): the page at /admin and /admin/, its
// files at /admin/<name>; anything else 404. headers carry the CSP and
// the other security headers on every answer.
func Serve(p string) (status int, headers map[string]string, body []byte) {
	headers = map[string]string{
		"content-security-policy": CSP,
		"x-content-type-options":  "nosniff",
		"referrer-policy":         "no-referrer",
		"x-frame-options":         "DENY",
		"cache-control":           "no-cache",
	}
	name := strings.TrimPrefix(strings.TrimPrefix(p, Prefix), "/")
	if name == "" {
		name = "index.html"
	}
	if strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		headers["content-type"] = "text/plain; charset=utf-8"
		return http.StatusNotFound, headers, []byte("not found\n")
	}
	b, err := files.ReadFile("static/" + name)
	if err != nil {
		headers["content-type"] = "text/plain; charset=utf-8"
		return http.StatusNotFound, headers, []byte("not found\n")
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	headers["content-type"] = ct
	return http.StatusOK, headers, b
}
