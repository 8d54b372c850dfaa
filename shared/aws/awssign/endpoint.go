package awssign

import (
	"fmt"
	"net/url"
	"strings"
)

// Endpoint is a service endpoint (scheme, host and an optional base path,
// such as a WebSocket API's stage) that operation paths are joined to.
type Endpoint struct {
	base    url.URL
	rawBase string
}

// ParseEndpoint parses an absolute http or https endpoint URL. Its query
// and fragment are ignored.
func ParseEndpoint(s string) (Endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("awssign: endpoint: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Endpoint{}, fmt.Errorf("awssign: endpoint %q is not an http(s) URL", s)
	}
	e := Endpoint{base: url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}}
	// As the SDK's endpoint middleware: a base without a raw path joins
	// its decoded path to the operation's raw path.
	e.rawBase = u.RawPath
	if e.rawBase == "" {
		e.rawBase = u.Path
	}
	return e, nil
}

// String is the endpoint URL.
func (e Endpoint) String() string { return e.base.String() }

// URL is the URL of the operation path prefix + label + suffix, e.g.
// ("/@connections/", id, "") or ("/2015-03-31/functions/", name,
// "/invocations"): the label escaped by Label in the raw path, the whole
// joined to the endpoint's path as the SDK joins them, so that the signer
// computes the canonical URI the SDK's clients do.
func (e Endpoint) URL(prefix, label, suffix string) *url.URL {
	u := e.base
	u.Path = joinPath(e.base.Path, prefix+label+suffix)
	u.RawPath = joinPath(e.rawBase, prefix+Label(label)+suffix)
	return &u
}

// joinPath is smithy-go's transport/http.JoinPath: a and b joined by one
// '/', the result absolute.
func joinPath(a, b string) string {
	if len(a) == 0 {
		a = "/"
	} else if a[0] != '/' {
		a = "/" + a
	}
	b = strings.TrimPrefix(b, "/")
	if len(b) != 0 && len(a) > 1 && a[len(a)-1] != '/' {
		a += "/"
	}
	return a + b
}

// Label escapes an HTTP label (a path parameter: a connection id, a
// function name or ARN) as the SDK's REST serializers do
// (smithy-go httpbinding.EscapePath with encodeSep): every byte but the
// unreserved A-Z a-z 0-9 - . _ ~ as %XX, '/' included. So
// "LmzSdfl8IAMCJqw=" is "LmzSdfl8IAMCJqw%3D".
func Label(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hexUpper = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hexUpper[c>>4], hexUpper[c&15])
		}
	}
	return string(b)
}

// unreserved reports whether c is left as it is in a label.
func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
