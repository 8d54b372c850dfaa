// Package egress checks that the functions can reach every AWS API they
// call: for each endpoint it resolves the host in the address family the
// deployment's egress carries and opens TLS to it (a TCP connection for a
// plain http:// endpoint, the local emulator's). The deploy-time
// EgressCheck custom resource (functions/egresscheck) runs it from inside
// the functions' subnets with their security group, and
// `go run ./localdev/egresscheck` runs it against an existing stack or
// `make dev`. A failure names the endpoint, what failed and the remedy.
package egress

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Endpoint is one API the functions call.
type Endpoint struct {
	// Name says what the functions call it for, e.g. "WebSocket
	// @connections (every WebSocket answer)".
	Name string `json:"Name"`
	// URL is the endpoint: https://host[:port][/path], or http:// for a
	// local emulator (then only TCP is opened).
	URL string `json:"Url"`
	// Network is the address family the egress carries: "tcp6" (IPv6
	// only: egress=ipv6), "tcp4" (through a NAT, or a VPC interface
	// endpoint) or "tcp" (either, as Go's dialer tries them).
	Network string `json:"Network"`
}

// Parse reads a JSON list of endpoints (the EgressCheck resource's
// Endpoints property, the stack's EgressEndpoints output); each needs a
// Name and a Url.
func Parse(b []byte) ([]Endpoint, error) {
	var eps []Endpoint
	if err := json.Unmarshal(b, &eps); err != nil {
		return nil, fmt.Errorf("egress: endpoints must be a list of {Name, Url, Network}: %w", err)
	}
	if len(eps) == 0 {
		return nil, errors.New("egress: the endpoint list is empty")
	}
	for _, ep := range eps {
		if ep.Name == "" || ep.URL == "" {
			return nil, fmt.Errorf("egress: endpoint %+v needs a Name and a Url", ep)
		}
	}
	return eps, nil
}

// Remedy is what a failure tells the operator to do.
const Remedy = "deploy with -c egress=nat-instance (IPv4 through a NAT instance) or -c egress=nat-gateway; " +
	"if the stack already uses a NAT, check the NAT and the app subnets' routes"

// Resolver looks up a host's addresses in one family ("ip6", "ip4", "ip"),
// as net.Resolver.LookupNetIP.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens a connection, as net.Dialer.DialContext.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Checker runs the check. The zero value is not usable: use New or set
// every field.
type Checker struct {
	Resolver Resolver
	Dialer   Dialer
	// TLS is the client configuration of the handshakes; its ServerName
	// is set per endpoint (nil: system roots, TLS 1.2+).
	TLS *tls.Config
	// Timeout bounds one attempt at one endpoint (resolve, connect, TLS).
	Timeout time.Duration
	// Attempts per endpoint (at least 1) and the Wait between them: a NAT
	// instance may still be starting when the check runs.
	Attempts int
	Wait     time.Duration
}

// New is a Checker with the system resolver and dialer: 5 s per attempt,
// 3 attempts 10 s apart.
func New() Checker {
	return Checker{
		Resolver: net.DefaultResolver,
		Dialer:   &net.Dialer{},
		Timeout:  5 * time.Second,
		Attempts: 3,
		Wait:     10 * time.Second,
	}
}

// Result is the outcome for one endpoint.
type Result struct {
	Endpoint Endpoint
	Host     string        // host:port dialled
	Addr     string        // the address that answered (empty on failure)
	Took     time.Duration // of the last attempt
	Err      error         // nil when reachable
}

// Failure is the error of an endpoint that could not be reached.
type Failure struct {
	Endpoint Endpoint
	Host     string
	Step     string // "url", "resolve", "connect" or "tls"
	Err      error
}

func (f *Failure) Error() string {
	return fmt.Sprintf("egress check: %s at %s is unreachable over %s (%s: %v); the functions could not call it: %s",
		f.Endpoint.Name, f.Host, family(f.Endpoint.Network), f.Step, f.Err, Remedy)
}

func (f *Failure) Unwrap() error { return f.Err }

// family names a network for people.
func family(network string) string {
	switch network {
	case "tcp6":
		return "IPv6"
	case "tcp4":
		return "IPv4"
	}
	return "IPv4 or IPv6"
}

// Check checks every endpoint (concurrently) and returns one Result each,
// in order, and the failures joined (nil when all are reachable).
func (c Checker) Check(ctx context.Context, eps []Endpoint) ([]Result, error) {
	out := make([]Result, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.checkOne(ctx, ep)
		}()
	}
	wg.Wait()
	var errs []error
	for _, r := range out {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return out, errors.Join(errs...)
}

// checkOne tries ep up to c.Attempts times.
func (c Checker) checkOne(ctx context.Context, ep Endpoint) Result {
	attempts := max(c.Attempts, 1)
	var r Result
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return r
			case <-time.After(c.Wait):
			}
		}
		r = c.attempt(ctx, ep)
		if r.Err == nil {
			return r
		}
	}
	return r
}

// attempt resolves ep's host in its family, connects to the first address
// that answers and, for https, completes a TLS handshake.
func (c Checker) attempt(ctx context.Context, ep Endpoint) Result {
	start := time.Now()
	r := Result{Endpoint: ep}
	fail := func(step string, err error) Result {
		r.Err, r.Took = &Failure{Endpoint: ep, Host: r.Host, Step: step, Err: err}, time.Since(start)
		return r
	}
	host, port, secure, err := target(ep.URL)
	r.Host = net.JoinHostPort(host, port)
	if err != nil {
		r.Host = ep.URL
		return fail("url", err)
	}
	network, ipNet := ep.Network, ""
	switch network {
	case "tcp6":
		ipNet = "ip6"
	case "tcp4":
		ipNet = "ip4"
	case "tcp", "":
		network, ipNet = "tcp", "ip"
	default:
		return fail("url", fmt.Errorf("network %q: want tcp6, tcp4 or tcp", ep.Network))
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = c.Resolver.LookupNetIP(ctx, ipNet, host); err != nil {
		return fail("resolve", fmt.Errorf("no %s address: %w", family(network), err))
	}
	addrs = inFamily(addrs, network)
	if len(addrs) == 0 {
		return fail("resolve", fmt.Errorf("no %s address", family(network)))
	}
	var conn net.Conn
	var dialErrs []error
	for _, a := range addrs {
		addr := net.JoinHostPort(a.String(), port)
		if conn, err = c.Dialer.DialContext(ctx, network, addr); err == nil {
			r.Addr = addr
			break
		}
		dialErrs = append(dialErrs, err)
	}
	if conn == nil {
		return fail("connect", errors.Join(dialErrs...))
	}
	defer conn.Close()
	if secure {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.TLS != nil {
			cfg = c.TLS.Clone()
		}
		cfg.ServerName = host
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			r.Addr = ""
			return fail("tls", err)
		}
	}
	r.Took = time.Since(start)
	return r
}

// target is the host, port and whether TLS applies, of an endpoint URL.
func target(raw string) (host, port string, secure bool, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false, err
	}
	switch u.Scheme {
	case "https":
		secure, port = true, "443"
	case "http":
		port = "80"
	default:
		return "", "", false, fmt.Errorf("%q is not an http(s) URL", raw)
	}
	if u.Hostname() == "" {
		return "", "", false, fmt.Errorf("%q has no host", raw)
	}
	if p := u.Port(); p != "" {
		port = p
	}
	return strings.ToLower(u.Hostname()), port, secure, nil
}

// inFamily keeps the addresses network can dial.
func inFamily(addrs []netip.Addr, network string) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if (network == "tcp6" && !a.Is6()) || (network == "tcp4" && !a.Is4()) {
			continue
		}
		out = append(out, a)
	}
	return out
}
