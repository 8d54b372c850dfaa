// Package relayurl is how a client's URL or host is matched to this relay:
// the one normalisation NIP-98 `u` tags and NIP-42 `relay` tags are compared
// by, and the loopback rule (the loopback names are one machine).
package relayurl

import (
	"net"
	"net/url"
	"strings"
)

// loopbackNames are the spellings of this machine a local relay answers
// to; Normalize spells them all localhost.
var loopbackNames = [...]string{"127.0.0.1", "localhost", "::1"}

// LoopbackNames are the loopback names (localhost, 127.0.0.1, ::1): a
// client on this machine may use any of them for a relay on it.
func LoopbackNames() []string { return append([]string(nil), loopbackNames[:]...) }

// Loopback reports whether host (a name or IP address, with or without a
// port or brackets, any case) is one of the loopback names. Other loopback
// addresses (127.0.0.2) are distinct listeners and are not.
func Loopback(host string) bool {
	h := strings.ToLower(host)
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	}
	h = strings.Trim(h, "[]")
	for _, n := range loopbackNames {
		if h == n {
			return true
		}
	}
	return false
}

// Hostname is host (a Host header, a hostname with or without a port or
// brackets) as communities and Blossom server tags compare it: lowercase,
// without port, brackets or a trailing dot.
func Hostname(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.Trim(host, "[]"), ".")
}

// Normalize lowercases scheme and host, drops the scheme's default port
// (80 for http and ws, 443 for https and wss) and a trailing slash, and
// spells a loopback host localhost (with its port), so equivalent spellings
// of one relay's URL compare equal: ws://Relay.example:80/ and
// ws://relay.example, http://127.0.0.1:8080/q and http://localhost:8080/q.
// The query string is kept. Text that is not a URL with a host is only
// trimmed and lowercased.
func Normalize(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return strings.TrimRight(strings.ToLower(strings.TrimSpace(s)), "/")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	name, port := host, ""
	if n, p, err := net.SplitHostPort(host); err == nil {
		name, port = n, p
	}
	switch {
	case port == "443" && (scheme == "wss" || scheme == "https"),
		port == "80" && (scheme == "ws" || scheme == "http"):
		host, port = host[:len(host)-len(":"+port)], ""
	}
	if Loopback(name) {
		host = "localhost"
		if port != "" {
			host += ":" + port
		}
	}
	out := scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out
}

// Endpoint is where a URL (scheme://host[:port][/path]) reaches a relay:
// its hostname as Hostname spells it (the loopback names spelled
// localhost) and its port, the scheme's default when none is written (80
// for ws and http, 443 for wss and https). ok is false for text that is
// not such a URL, or one whose port its scheme leaves unknown.
func Endpoint(s string) (host, port string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return "", "", false
	}
	host, port = Hostname(u.Host), u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "ws", "http":
			port = "80"
		case "wss", "https":
			port = "443"
		default:
			return "", "", false
		}
	}
	if host == "" {
		return "", "", false
	}
	if Loopback(host) {
		host = "localhost"
	}
	return host, port, true
}

// SameEndpoint reports whether URLs a and b reach the same listener: the
// same host (the loopback names alike) and the same port, each port the
// written one or its scheme's default (ws://h and ws://h:80 are one;
// ws://127.0.0.1:1 and ws://localhost:8080 are two).
func SameEndpoint(a, b string) bool {
	ha, pa, ok := Endpoint(a)
	if !ok {
		return false
	}
	hb, pb, ok := Endpoint(b)
	return ok && ha == hb && pa == pb
}
