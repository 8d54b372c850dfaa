package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// names is a resolver from a fixed table: a host missing from it does not
// exist.
type names map[string][]string

func (n names) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	raw, ok := n[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range raw {
		a := netip.MustParseAddr(s)
		if (network == "ip6" && a.Is6()) || (network == "ip4" && a.Is4()) || network == "ip" {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// flaky fails its first fails dials, then dials for real.
type flaky struct {
	fails int32
	n     atomic.Int32
}

func (f *flaky) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if f.n.Add(1) <= f.fails {
		return nil, errors.New("i/o timeout")
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

func TestCheck(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	trusted := &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, MinVersion: tls.VersionTLS12}
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	at := func(scheme, host string, p int) string {
		return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(p))
	}
	// httptest's certificate names example.com; it lives on 127.0.0.1.
	dns := names{"example.com": {"127.0.0.1"}, "dual.example.com": {"127.0.0.1", "::1"}}
	for _, tc := range []struct {
		name    string
		ep      Endpoint
		tls     *tls.Config
		dialer  Dialer
		step    string // "" = reachable
		wantErr string
	}{
		{name: "https over IPv4", ep: Endpoint{"KMS", at("https", "example.com", port), "tcp4"}, tls: trusted},
		{name: "https either family", ep: Endpoint{"KMS", at("https", "example.com", port), "tcp"}, tls: trusted},
		{name: "plain http is TCP only", ep: Endpoint{"@connections", at("http", "127.0.0.1", port), "tcp"}},
		{name: "no AAAA over IPv6", ep: Endpoint{"WebSocket @connections", at("https", "example.com", port), "tcp6"}, tls: trusted,
			step: "resolve", wantErr: "no IPv6 address"},
		{name: "unknown host", ep: Endpoint{"Lambda", "https://nowhere.invalid", "tcp4"}, step: "resolve", wantErr: "no such host"},
		{name: "refused", ep: Endpoint{"Secrets Manager", "http://" + closed, "tcp4"}, step: "connect", wantErr: "refused"},
		{name: "untrusted certificate", ep: Endpoint{"S3", at("https", "example.com", port), "tcp4"}, step: "tls", wantErr: "certificate"},
		{name: "not http", ep: Endpoint{"SSM", "ftp://example.com", "tcp4"}, step: "url", wantErr: "not an http(s) URL"},
		{name: "bad network", ep: Endpoint{"KMS", "https://example.com", "udp"}, step: "url", wantErr: "want tcp6, tcp4 or tcp"},
		{name: "retried until it answers", ep: Endpoint{"KMS", at("https", "example.com", port), "tcp4"}, tls: trusted, dialer: &flaky{fails: 2}},
		{name: "gives up after the attempts", ep: Endpoint{"KMS", at("https", "example.com", port), "tcp4"}, tls: trusted, dialer: &flaky{fails: 3},
			step: "connect", wantErr: "i/o timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Checker{Resolver: dns, Dialer: &net.Dialer{}, TLS: tc.tls, Timeout: 5 * time.Second, Attempts: 3, Wait: time.Millisecond}
			if tc.dialer != nil {
				c.Dialer = tc.dialer
			}
			res, err := c.Check(context.Background(), []Endpoint{tc.ep})
			if len(res) != 1 {
				t.Fatalf("%d results", len(res))
			}
			if tc.step == "" {
				if err != nil || res[0].Err != nil || res[0].Addr == "" {
					t.Fatalf("want reachable, got %v (addr %q)", err, res[0].Addr)
				}
				return
			}
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("want a Failure, got %v", err)
			}
			msg := err.Error()
			if f.Step != tc.step || !strings.Contains(msg, tc.wantErr) {
				t.Errorf("step %s, message %q; want step %s containing %q", f.Step, msg, tc.step, tc.wantErr)
			}
			// The message names the endpoint, what it is for, and the remedy.
			for _, want := range []string{tc.ep.Name, "-c egress=nat-instance", "egress check:"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

// Every endpoint is checked and every failure reported, in one error.
func TestCheckReportsEveryFailure(t *testing.T) {
	c := Checker{Resolver: names{}, Dialer: &net.Dialer{}, Timeout: time.Second, Attempts: 1}
	res, err := c.Check(context.Background(), []Endpoint{
		{"KMS", "https://kms.example.invalid", "tcp6"},
		{"Lambda", "https://lambda.example.invalid", "tcp6"},
	})
	if len(res) != 2 || res[0].Err == nil || res[1].Err == nil {
		t.Fatalf("results %+v", res)
	}
	for _, want := range []string{"KMS at kms.example.invalid:443 is unreachable over IPv6", "Lambda at lambda.example.invalid:443"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
