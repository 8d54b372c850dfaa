package blossom

import (
	"net/http"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	h := strings.Repeat("a", 64)
	for _, c := range []struct {
		method, path, op, name string
		ok                     bool
		side                   Side
	}{
		{"PUT", "/upload", "upload", "", true, Write},
		{"HEAD", "/upload", "preflight", "", true, Write},
		{"POST", "/upload", "", "", false, 0},
		{"GET", "/upload", "", "", false, 0},
		{"PUT", "/media/upload", "upload", "", true, Write},
		{"HEAD", "/media/upload", "preflight", "", true, Write},
		{"POST", "/media/upload", "presign", "", true, Write},
		{"GET", "/" + h, "get", h, true, Read},
		{"GET", "/" + h + ".png", "get", h + ".png", true, Read},
		{"HEAD", "/" + h, "head", h, true, Read},
		{"DELETE", "/" + h, "delete", h, true, Write},
		{"GET", "/media/" + h, "get", h, true, Read},
		{"DELETE", "/media/" + h, "delete", h, true, Write},
		{"GET", "/not-a-hash", "get", "not-a-hash", true, Read},
		{"GET", "/list/" + h, "list", h, true, Read},
		{"OPTIONS", "/upload", "options", "", true, Both},
		{"GET", "/", "", "", false, 0},
		{"POST", "/", "", "", false, 0},
		{"GET", "/healthz", "", "", false, 0},
		{"POST", "/events", "", "", false, 0},
		{"POST", "/query", "", "", false, 0},
		{"GET", "/media", "", "", false, 0},
		{"GET", "/a/b", "", "", false, 0},
		{"PATCH", "/" + h, "", "", false, 0},
	} {
		rt, ok := match(c.method, c.path)
		if ok != c.ok || rt.op != c.op || rt.name != c.name || (ok && side(rt.op) != c.side) {
			t.Errorf("match(%s %s) = %+v %v, want op %q name %q ok %v side %d", c.method, c.path, rt, ok, c.op, c.name, c.ok, c.side)
		}
	}
	if side("upload")&Read != 0 || side("get")&Write != 0 {
		t.Error("sides overlap")
	}
	_ = http.MethodGet
}
