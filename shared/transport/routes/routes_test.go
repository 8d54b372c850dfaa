package routes

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/front"
	"github.com/buzzrelay/relay/shared/service/invites"
	"github.com/buzzrelay/relay/shared/service/manage"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	blossomhttp "github.com/buzzrelay/relay/shared/transport/blossom"
	"github.com/buzzrelay/relay/shared/transport/bridge"
	"github.com/buzzrelay/relay/shared/transport/nip86"
)

// server is a function's server with every part wired (none is called:
// Match only reads which are there).
func server(side Side, media bool) *Server {
	s := &Server{Bridge: &bridge.Bridge{Log: testkit.Quiet(), Manager: &manage.Service{}, Invites: &invites.Service{}}, Side: side}
	if media {
		s.Media = &blossomhttp.Codec{}
	}
	return s
}

// TestRouteTableMatchesEveryPath walks the HTTP handler's routing with
// every known path and unknown ones: each request reaches the row it is
// for (its pattern and its use case) on the side that serves it, or the
// fallback; a {param} never captures a name the table spells out (what
// blossom's list of the bridge's names did by hand).
func TestRouteTableMatchesEveryPath(t *testing.T) {
	h := strings.Repeat("a", 64)
	const none = "" // the fallback: 404, or 204 for OPTIONS
	for _, c := range []struct {
		method, path string
		side         Side
		media        bool
		pattern      string
		param        string
	}{
		// The bridge.
		{"POST", "/events", Write, true, "/events", ""},
		{"POST", "/events/", Write, true, "/events", ""},
		{"POST", "/events", Read, true, none, ""},
		{"GET", "/events", Write, true, none, ""},
		{"POST", "/query", Read, true, "/query", ""},
		{"POST", "/query", Write, true, none, ""},
		{"POST", "/count", Read, true, "/count", ""},
		{"GET", "/query", Read, true, none, ""},
		{"GET", "/", Read, true, "/", ""},
		{"GET", "/", Write, false, "/", ""},
		{"GET", "", Read, false, "/", ""},
		{"GET", "/healthz", Write, true, "/healthz", ""},
		{"GET", "/healthz", Read, true, "/healthz", ""},
		{"DELETE", "/healthz", Write, true, none, ""},
		// The console.
		{"GET", "/admin", Read, false, "/admin", ""},
		{"GET", "/admin/", Read, false, "/admin", ""},
		{"HEAD", "/admin/x", Read, false, "/admin/{file...}", "x"},
		{"GET", "/admin/a/b", Read, false, "/admin/{file...}", "a/b"},
		{"POST", "/admin", Read, false, none, ""},
		{"GET", "/administrator", Read, false, none, ""},
		{"GET", "/administrator", Read, true, "/{blob}", "administrator"},
		// Invites.
		{"POST", "/api/invites", Write, false, "/api/invites", ""},
		{"POST", "/api/invites", Read, false, none, ""},
		{"POST", "/api/invites/claim", Write, false, "/api/invites/claim", ""},
		{"POST", "/api/invites/accept-policy", Read, false, "/api/invites/accept-policy", ""},
		{"GET", "/api/join-policy", Read, false, "/api/join-policy", ""},
		{"GET", "/api/join-policy/terms", Read, false, "/api/join-policy/terms", ""},
		{"GET", "/api/join-policy/privacy", Read, false, "/api/join-policy/privacy", ""},
		{"GET", "/api/join-policy/other", Read, false, none, ""},
		{"GET", "/invite/abc", Read, false, "/invite/{code...}", "abc"},
		{"GET", "/invite/a/b", Read, false, "/invite/{code...}", "a/b"},
		{"GET", "/invite/abc", Write, false, none, ""},
		{"GET", "/info", Read, true, "/info", ""},
		{"GET", "/info", Write, true, none, ""},
		// Media (the cases blossom's own matcher was held to).
		{"PUT", "/upload", Write, true, "/upload", ""},
		{"PUT", "/upload", Write, false, none, ""},
		{"PUT", "/upload", Read, true, none, ""},
		{"HEAD", "/upload", Write, true, "/upload", ""},
		{"POST", "/upload", Write, true, none, ""},
		{"GET", "/upload", Read, true, none, ""},
		{"PUT", "/media/upload", Write, true, "/media/upload", ""},
		{"HEAD", "/media/upload", Write, true, "/media/upload", ""},
		{"POST", "/media/upload", Write, true, "/media/upload", ""},
		{"GET", "/media/upload", Read, true, none, ""},
		{"GET", "/" + h, Read, true, "/{blob}", h},
		{"GET", "/" + h + ".png", Read, true, "/{blob}", h + ".png"},
		{"GET", "/" + h, Write, true, none, ""},
		{"HEAD", "/" + h, Read, true, "/{blob}", h},
		{"DELETE", "/" + h, Write, true, "/{blob}", h},
		{"DELETE", "/" + h, Read, true, none, ""},
		{"GET", "/media/" + h, Read, true, "/media/{blob}", h},
		{"DELETE", "/media/" + h, Write, true, "/media/{blob}", h},
		{"GET", "/not-a-hash", Read, true, "/{blob}", "not-a-hash"},
		{"GET", "/list/" + h, Read, true, "/list/{pubkey}", h},
		// The admin API's feedback attachment: two params, media and the
		// admin API both needed.
		{"GET", "/api/admin/v1/feedback/" + h[:32] + "/attachments/" + h, Read, true, "/api/admin/v1/feedback/{id}/attachments/{sha256}", h[:32] + "/" + h},
		{"GET", "/api/admin/v1/feedback/" + h[:32] + "/attachments/" + h, Read, false, none, ""},
		{"GET", "/api/admin/v1/feedback/" + h[:32] + "/attachments/" + h, Write, true, none, ""},
		{"GET", "/api/admin/v1/feedback/" + h[:32] + "/attachments", Read, true, none, ""},
		{"HEAD", "/api/admin/v1/feedback/" + h[:32] + "/attachments/" + h, Read, true, none, ""},
		{"GET", "/api/admin/v1/feedback/" + h[:32], Read, true, "/api/admin/v1/feedback/{id}", h[:32]},
		{"OPTIONS", "/upload", Read, true, "/upload", ""},
		{"OPTIONS", "/" + h, Write, true, "/{blob}", h},
		{"OPTIONS", "/events", Write, true, none, ""},
		{"OPTIONS", "/upload", Read, false, none, ""},
		{"POST", "/", Read, true, none, ""}, // no NIP-86 content type
		{"GET", "/media", Read, true, none, ""},
		{"GET", "/a/b", Read, true, none, ""},
		{"PATCH", "/" + h, Read, true, none, ""},
		{"GET", "/events", Read, true, none, ""},
		{"GET", "/count", Read, true, none, ""},
		{"GET", "/healthz/x", Read, true, none, ""},
	} {
		rt, param := server(c.side, c.media).Match(bridge.Request{Method: c.method, Path: c.path})
		pattern := rt.Path
		if pattern == "*" {
			pattern = none
		}
		if pattern != c.pattern || param != c.param || (pattern != none && rt.Side&c.side == 0) {
			t.Errorf("%s %s on side %d (media %v): %q %q, want %q %q", c.method, c.path, c.side, c.media, pattern, param, c.pattern, c.param)
		}
	}
	nip86 := bridge.Request{Method: "POST", Path: "/", Headers: map[string]string{"content-type": nip86.ContentType}}
	if rt, _ := server(Read, false).Match(nip86); rt.Errors != NIP86Answer {
		t.Errorf("NIP-86 call: %+v", rt)
	}
	if rt, _ := server(Write, false).Match(nip86); rt.Path != "*" {
		t.Errorf("NIP-86 on the writing function: %+v", rt)
	}
	noManage := server(Read, false)
	noManage.Bridge.Manager = nil
	if rt, _ := noManage.Match(nip86); rt.Path != "*" {
		t.Errorf("NIP-86 without its use case: %+v", rt)
	}
}

// TestUnroutedPathsAnswer404WithCORS: what no row serves gets the bridge's
// 404 (its {"error"} body) with the bridge's CORS headers, an OPTIONS the
// bridge's 204, through the same Serve every function runs.
func TestUnroutedPathsAnswer404WithCORS(t *testing.T) {
	ctx := context.Background()
	for _, side := range []Side{Write, Read} {
		s := server(side, true)
		for _, p := range []string{"/nope/x/y", "/events/x", "/media", "/api/join-policy/other", "/list/a/b"} {
			r := s.Serve(ctx, bridge.Request{Method: "GET", Path: p})
			var body map[string]string
			_ = json.Unmarshal(r.Body, &body)
			if r.Status != http.StatusNotFound || !strings.HasPrefix(body["error"], "invalid: no route for GET "+p) ||
				r.Headers["access-control-allow-origin"] != "*" || r.Headers["access-control-allow-headers"] != BridgeCORS["access-control-allow-headers"] {
				t.Errorf("GET %s on %d: %d %s %v", p, side, r.Status, r.Body, r.Headers)
			}
		}
		r := s.Serve(ctx, bridge.Request{Method: "OPTIONS", Path: "/events"})
		if r.Status != http.StatusNoContent || r.Headers["access-control-allow-methods"] != BridgeCORS["access-control-allow-methods"] {
			t.Errorf("OPTIONS /events: %d %v", r.Status, r.Headers)
		}
		r = s.Serve(ctx, bridge.Request{Method: "OPTIONS", Path: "/upload"})
		if r.Status != http.StatusNoContent || r.Headers["access-control-max-age"] != "86400" || r.Headers["x-content-type-options"] != "nosniff" {
			t.Errorf("OPTIONS /upload: %d %v", r.Status, r.Headers)
		}
	}
}

// TestRouteTableRows: every row says its methods, a pattern Match can
// read, the side that serves it, the use case it calls, its error table
// and its headers, and has a handler; no two rows serve the same method
// and pattern on the same side.
func TestRouteTableRows(t *testing.T) {
	seen := map[string]bool{}
	for _, rt := range append(append([]Route(nil), Table...), Fallback...) {
		if len(rt.Methods) == 0 || rt.Path == "" || rt.Side == 0 || rt.UseCase == "" || rt.Errors == "" || rt.Headers == nil || rt.Serve == nil {
			t.Errorf("incomplete row %+v", rt)
		}
		if rt.Path != "*" && (!strings.HasPrefix(rt.Path, "/") || strings.Count(rt.Path, "{") != strings.Count(rt.Path, "/{") ||
			strings.Count(rt.Path, "}") != strings.Count(rt.Path, "}/")+strings.Count(rt.Path[len(rt.Path)-1:], "}") ||
			strings.Count(rt.Path, "...}") > 1 || (strings.Contains(rt.Path, "...}") && !strings.HasSuffix(rt.Path, "...}"))) {
			t.Errorf("pattern %q: a path whose {param}s are whole segments ({param...} only last)", rt.Path)
		}
		for _, m := range rt.Methods {
			for _, side := range []Side{Write, Read} {
				k := m + " " + rt.Path + " " + rt.ContentType
				if rt.Side&side != 0 {
					k += string(rune('0' + side))
					if seen[k] {
						t.Errorf("two rows serve %s", k)
					}
					seen[k] = true
				}
			}
		}
	}
}

// TestNoRouteOutsideTheTable fails on a route served outside the table:
// no transport package but this one compares a request's path or method
// (a switch, ==, != or a strings prefix test on .Path or .Method of a
// request), so every HTTP route is a row here.
func TestNoRouteOutsideTheTable(t *testing.T) {
	dirs, err := filepath.Glob("../*")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		if filepath.Base(dir) == "routes" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			file, err := parser.ParseFile(fset, f, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				var operands []ast.Expr
				switch n := n.(type) {
				case *ast.BinaryExpr:
					if n.Op == token.EQL || n.Op == token.NEQ {
						operands = []ast.Expr{n.X, n.Y}
					}
				case *ast.SwitchStmt:
					operands = []ast.Expr{n.Tag}
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "HasPrefix" || sel.Sel.Name == "CutPrefix" || sel.Sel.Name == "TrimPrefix") {
						operands = n.Args
					}
				}
				for _, e := range operands {
					if e != nil && routing(e) {
						t.Errorf("%s: a route decided outside the route table (shared/transport/routes)", fset.Position(e.Pos()))
					}
				}
				return true
			})
		}
	}
}

// routing reports whether e reads a request's path or method: any
// x.Path, or r.Method (r: the codecs' name for a bridge.Request; a
// NIP-86 call's own method is no route).
func routing(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && (sel.Sel.Name == "Path" || sel.Sel.Name == "Method" && id.Name == "r") {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestMatchPathParamBeforeLiterals: a {param} followed by literal segments
// (the admin API's /reports/{id}/resolve) captures exactly one segment and
// needs the literals after it.
func TestMatchPathParamBeforeLiterals(t *testing.T) {
	for _, c := range []struct {
		pattern, path, param string
		ok                   bool
	}{
		{"/a/{id}/resolve", "/a/x1/resolve", "x1", true},
		{"/a/{id}/resolve", "/a/x1", "", false},
		{"/a/{id}/resolve", "/a//resolve", "", false},
		{"/a/{id}/resolve", "/a/x/y/resolve", "", false},
		{"/a/{id}/resolve", "/a/x1/resolved", "", false},
		{"/a/{id}", "/a/x1", "x1", true},
		{"/a/{id}", "/a/x1/resolve", "", false},
		{"/a/{rest...}", "/a/x/y", "x/y", true},
		{"/a/{id}/b/{h}", "/a/x1/b/y2", "x1/y2", true},
		{"/a/{id}/b/{h}", "/a/x1/b", "", false},
		{"/a/{id}/b/{h}", "/a/x1/b/", "", false},
		{"/a/{id}/b/{h}", "/a/x1/c/y2", "", false},
		{"/a/{id}/b/{h}", "/a/x1/b/y2/z", "", false},
		{"/a/{id}/b/{h}", "/a/x1/b/attachments", "", false}, // a spelled name
		{"/a/{id}/{rest...}", "/a/x1/y/z", "x1/y/z", true},
		{"/a/{rest...}", "/a", "", false},
		{"/{blob}", "/", "", false},
	} {
		p, ok := matchPath(c.pattern, c.path)
		if p != c.param || ok != c.ok {
			t.Errorf("matchPath(%q, %q) = %q, %v; want %q, %v", c.pattern, c.path, p, ok, c.param, c.ok)
		}
	}
}

// TestStreamedRoutesAreTheFrontsPattern: the paths the front streams
// (front.StreamPattern) are exactly the attachment route's: every row's
// sample path matches it only when the row's handler may answer a
// stream.
func TestStreamedRoutesAreTheFrontsPattern(t *testing.T) {
	for _, rt := range Table {
		sample := strings.NewReplacer("{id}", strings.Repeat("d", 32), "{sha256}", strings.Repeat("e", 64), "{pubkey}", strings.Repeat("b", 64),
			"{blob}", strings.Repeat("a", 64)).Replace(rt.Path)
		ok, err := path.Match(front.StreamPattern, sample)
		if err != nil {
			t.Fatal(err)
		}
		if want := rt.Path == bridge.AdminPrefix+"/feedback/{id}/attachments/{sha256}"; ok != want {
			t.Errorf("%s: the front streams it: %v, want %v", rt.Path, ok, want)
		}
	}
}
