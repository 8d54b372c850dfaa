package console

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// The console is its static files only: the page and its assets answer
// with their types, anything else (a traversal, a hidden or unknown name)
// is a 404, and every answer carries the CSP and the other security
// headers.
func TestConsoleServesOnlyItsFilesWithTheCSP(t *testing.T) {
	for _, c := range []struct {
		path   string
		status int
		typ    string
	}{
		{"/admin", 200, "text/html; charset=utf-8"},
		{"/admin/", 200, "text/html; charset=utf-8"},
		{"/admin/index.html", 200, "text/html; charset=utf-8"},
		{"/admin/console.js", 200, "text/javascript; charset=utf-8"},
		{"/admin/console.css", 200, "text/css; charset=utf-8"},
		{"/admin/../go.mod", 404, ""},
		{"/admin/static/console.js", 404, ""},
		{"/admin/.env", 404, ""},
		{"/admin/nosuch.js", 404, ""},
	} {
		status, h, body := Serve(c.path)
		if status != c.status || (c.typ != "" && h["content-type"] != c.typ) || len(body) == 0 {
			t.Errorf("%s: %d %q (%d bytes)", c.path, status, h["content-type"], len(body))
		}
		if h["content-security-policy"] != CSP || h["x-content-type-options"] != "nosniff" || h["x-frame-options"] != "DENY" {
			t.Errorf("%s: headers %v", c.path, h)
		}
	}
}

// The CSP allows no inline code, so the page must have none: no inline
// script or style, no on* handler attribute, no javascript: URL, nothing
// secret-looking, and every script and stylesheet from its own origin.
func TestConsolePageHasNoInlineCodeOrSecrets(t *testing.T) {
	inline := regexp.MustCompile(`(?i)<script[^>]*>\s*[^<\s]|<style|\son[a-z]+\s*=|javascript:|nsec1`)
	src := regexp.MustCompile(`(?i)(?:src|href)="([^"]+)"`)
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := files.ReadFile(p)
		if strings.HasSuffix(p, ".html") {
			if m := inline.Find(b); m != nil {
				t.Errorf("%s: inline code %q", p, m)
			}
			for _, m := range src.FindAllSubmatch(b, -1) {
				if u := string(m[1]); !strings.HasPrefix(u, "/admin/") && u != "data:," {
					t.Errorf("%s: loads %s from elsewhere", p, u)
				}
			}
		}
		if strings.Contains(string(b), "innerHTML") || strings.Contains(string(b), "eval(") {
			t.Errorf("%s: builds markup or code from strings", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(CSP, "script-src 'self'") || strings.Contains(CSP, "unsafe") {
		t.Errorf("CSP %s", CSP)
	}
}
