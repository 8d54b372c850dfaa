package emulator

import "testing"

func TestPathParameters(t *testing.T) {
	for _, c := range []struct {
		route, path string
		ok          bool
	}{
		{"/{blob}", "/abc.png", true},
		{"/{blob}", "/", false},
		{"/{blob}", "/a/b", false},
		{"/media/{blob}", "/media/abc", true},
		{"/media/{blob}", "/list/abc", false},
		{"/list/{pubkey}", "/list/abc", true},
		{"/upload", "/upload", true},
	} {
		if got := pathMatches(c.route, c.path); got != c.ok {
			t.Errorf("pathMatches(%q, %q) = %v", c.route, c.path, got)
		}
	}
	a := &HTTPAPI{Routes: map[string]HTTPHandler{"GET /{blob}": nil, "GET /healthz": nil}}
	if k, _, ok := a.lookup("GET", "/healthz"); !ok || k != "GET /healthz" {
		t.Errorf("an exact route must win: %q", k)
	}
	if k, _, ok := a.lookup("GET", "/abc"); !ok || k != "GET /{blob}" {
		t.Errorf("a parameter route: %q", k)
	}
	if _, _, ok := a.lookup("DELETE", "/abc"); ok {
		t.Error("another method matched")
	}
}
