package gifs

import (
	"strings"
	"testing"
)

// The provider's host is fixed at start: https, or http to loopback only,
// no credentials or query riding in the base.
func TestParseBase(t *testing.T) {
	for _, c := range []struct {
		base string
		ok   bool
	}{
		{DefaultBase, true},
		{"http://127.0.0.1:9/api/v1", true},
		{"http://[::1]:9/api/v1/", true},
		{"http://api.klipy.com/api/v1/", false},
		{"http://10.0.0.1/api/v1/", false},
		{"https://user:pw@api.klipy.com/api/v1/", false},
		{"https://api.klipy.com/api/v1/?x=1", false},
		{"ftp://api.klipy.com/", false},
		{"/relative", false},
	} {
		if _, err := ParseBase(c.base); (err == nil) != c.ok {
			t.Errorf("ParseBase(%q): %v, want ok %v", c.base, err, c.ok)
		}
	}
}

// The key and a slug are each one escaped path segment under the fixed
// base: neither can change the host or climb the path.
func TestProviderURL(t *testing.T) {
	base, _ := ParseBase("https://api.klipy.com/api/v1/")
	s := &Service{Key: "key/with spaces", Base: base}
	for _, c := range []struct {
		segs []string
		want string
	}{
		{[]string{"gifs", "search"}, "https://api.klipy.com/api/v1/key%2Fwith%20spaces/gifs/search"},
		{[]string{"gifs", "share", "../../evil.example/x"}, "https://api.klipy.com/api/v1/key%2Fwith%20spaces/gifs/share/..%2F..%2Fevil.example%2Fx"},
		{[]string{"gifs", "share", "@evil.example"}, "https://api.klipy.com/api/v1/key%2Fwith%20spaces/gifs/share/@evil.example"},
	} {
		if got := s.url(c.segs...); got != c.want {
			t.Errorf("url(%v) = %s, want %s", c.segs, got, c.want)
		}
	}
}

// Buzz's bounds of the client's fields.
func TestText(t *testing.T) {
	for _, c := range []struct {
		v     string
		max   int
		empty bool
		ok    bool
	}{
		{"", MaxQuery, true, true},
		{"", MaxCustomerID, false, false},
		{"   ", MaxCustomerID, false, false},
		{strings.Repeat("é", MaxQuery), MaxQuery, true, true},
		{strings.Repeat("q", MaxQuery+1), MaxQuery, true, false},
	} {
		if err := text("f", c.v, c.max, c.empty); (err == nil) != c.ok {
			t.Errorf("text(%q): %v, want ok %v", c.v, err, c.ok)
		}
	}
}
