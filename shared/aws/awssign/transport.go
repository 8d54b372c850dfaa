package awssign

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// Transport timeouts. A call is otherwise bounded by its context.
const (
	dialTimeout           = 5 * time.Second
	tlsHandshakeTimeout   = 5 * time.Second
	responseHeaderTimeout = 10 * time.Second
	idleConnTimeout       = 90 * time.Second
)

// NewTransport is the Transport of a Client: an idle pool of maxConns
// connections per host (2·maxConns in all), so that as many calls in
// flight reuse their connections (below 1 is Go's default of 2), HTTP/2
// attempted over https, TLS 1.2 or later, proxies from the environment,
// and dial, TLS handshake and response header timeouts.
func NewTransport(maxConns int) *http.Transport {
	if maxConns < 1 {
		maxConns = http.DefaultMaxIdleConnsPerHost
	}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       idleConnTimeout,
		MaxIdleConns:          2 * maxConns,
		MaxIdleConnsPerHost:   maxConns,
	}
}

// NewHTTPClient is an http.Client on NewTransport(maxConns) that does not
// follow redirects (AWS APIs do not redirect; a 3xx is an error to report).
func NewHTTPClient(maxConns int) *http.Client {
	return &http.Client{
		Transport: NewTransport(maxConns),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
