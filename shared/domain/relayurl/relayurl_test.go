package relayurl_test

import (
	"testing"

	"github.com/buzzrelay/relay/shared/domain/relayurl"
)

// Equivalent spellings of one relay's URL normalise alike, over HTTP
// (NIP-98 u) and WebSocket (NIP-42 relay); loopback spellings name one
// local relay; other hosts stay as they are.
func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		// WebSocket (was wsrelay.NormalizeURL's table)
		"WS://Relay.Example:80/":        "ws://relay.example",
		"wss://relay.example:443":       "wss://relay.example",
		"wss://abc.execute-api.x/prod/": "wss://abc.execute-api.x/prod",
		"ws://127.0.0.1:8080":           "ws://localhost:8080",
		"ws://[::1]:8080/":              "ws://localhost:8080",
		"ws://LocalHost:8080":           "ws://localhost:8080",
		"ws://127.0.0.2:8080":           "ws://127.0.0.2:8080",
		// HTTP (was nip98.NormalizeURL's table)
		"http://localhost:8080/query":  "http://localhost:8080/query",
		"http://127.0.0.1:8080/query":  "http://localhost:8080/query",
		"http://[::1]:8080/query/":     "http://localhost:8080/query",
		"HTTP://LocalHost:8080/query":  "http://localhost:8080/query",
		"http://127.0.0.1/query":       "http://localhost/query",
		"http://[::1]/query":           "http://localhost/query",
		"http://127.0.0.2:8080/query":  "http://127.0.0.2:8080/query",
		"https://relay.example:443/q":  "https://relay.example/q",
		"http://localhost.evil:8080/q": "http://localhost.evil:8080/q",
		// a port that is not the scheme's default stays; the query stays
		"http://relay.example:443/q":     "http://relay.example:443/q",
		"http://localhost:80/events":     "http://localhost/events",
		"https://r.example/query?deep=1": "https://r.example/query?deep=1",
		"  wss://R.example/  ":           "wss://r.example",
		"Relay.Example/":                 "relay.example",
	} {
		if got := relayurl.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost:8080": true, "127.0.0.1": true, "127.0.0.1:8080": true,
		"::1": true, "[::1]": true, "[::1]:8080": true,
		"127.0.0.2": false, "localhost.evil": false, "10.0.0.1:8080": false, "": false, "relay.example": false,
	} {
		if got := relayurl.Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
	if n := relayurl.LoopbackNames(); len(n) != 3 || n[1] != "localhost" {
		t.Fatalf("LoopbackNames = %v", n)
	}
}

func TestHostname(t *testing.T) {
	for in, want := range map[string]string{
		"Relay.Example:443": "relay.example", "relay.example.": "relay.example", "[::1]:8080": "::1",
		" localhost ": "localhost", "127.0.0.1": "127.0.0.1",
	} {
		if got := relayurl.Hostname(in); got != want {
			t.Errorf("Hostname(%q) = %q, want %q", in, got, want)
		}
	}
}

// Two URLs name one relay only with the same host and the same port, each
// port written or its scheme's default.
func TestSameEndpoint(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"ws://127.0.0.1:8080", "ws://localhost:8080", true},
		{"ws://[::1]:8080/", "http://127.0.0.1:8080", true},
		{"ws://127.0.0.1:1", "ws://127.0.0.1:8080", false},
		{"ws://localhost", "ws://localhost:8080", false},
		{"ws://relay.example", "ws://relay.example:80", true},
		{"wss://relay.example", "https://relay.example:443", true},
		{"wss://relay.example", "ws://relay.example", false}, // 443 against 80
		{"wss://relay.example:8443", "wss://relay.example", false},
		{"wss://Relay.Example.", "wss://relay.example", true},
		{"wss://x.relay.example", "wss://relay.example", false},
		{"relay.example", "wss://relay.example", false},       // no scheme: no port known
		{"ftp://relay.example", "wss://relay.example", false}, // no default port
		{"", "", false},
	} {
		if got := relayurl.SameEndpoint(c.a, c.b); got != c.want {
			t.Errorf("SameEndpoint(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
