package push

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/push"
)

// A callback whose host resolves to this machine (or any address
// netpolicy.PublicAddr refuses) never connects: the dialer checks the address
// after resolution, so a public-looking name that rebinds to a private
// address is refused too. The local exception connects.
func TestCallbackClientRefusesPrivateAddressesAfterResolution(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, url := range []string{srv.URL, "http://localhost:" + port} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, nil)
		_, err := NewClient(push.Policy{}).Do(req)
		if err == nil || !errors.Is(err, errPrivate) {
			t.Errorf("strict client reached %s: %v", url, err)
		}
	}
	if hits != 0 {
		t.Fatalf("the callback server got %d requests", hits)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, nil)
	resp, err := NewClient(push.Policy{AllowPrivate: true}).Do(req)
	if err != nil {
		t.Fatalf("local exception: %v", err)
	}
	resp.Body.Close()
}

// A redirect is not followed (it could point anywhere): it is a failed try.
func TestCallbackRedirectIsAFailureNotFollowed(t *testing.T) {
	followed := false
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed = true }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	s := &Service{Client: NewClient(push.Policy{AllowPrivate: true})}
	status, _, err := s.dial(context.Background(), DialRequest{URL: srv.URL})
	if out, _ := classify(status, err); out != failed || followed {
		t.Errorf("redirect: outcome %v, followed %v; want a failure, not followed", out, followed)
	}
	for status, want := range map[int]outcome{200: delivered, 204: delivered, 404: gone, 410: gone, 429: failed, 500: failed, 400: failed} {
		if got, _ := classify(status, nil); got != want {
			t.Errorf("classify(%d) = %v, want %v", status, got, want)
		}
	}
}

// The dialer's check is netpolicy's one classifier: every form of a
// non-public address issue 51 named (and the plain ones) is refused at
// dial, a public address passes.
func TestDialCheckRefusesEveryNonPublicForm(t *testing.T) {
	for addr, ok := range map[string]bool{
		"[::127.0.0.1]:443": false, "[::ffff:0:127.0.0.1]:443": false, "[64:ff9b:1::a00:1]:443": false,
		"[2002:7f00:1::1]:443": false, "[fec0::1]:443": false, "[2001::1]:443": false,
		"[::ffff:127.0.0.1]:443": false, "127.0.0.1:443": false, "169.254.169.254:80": false,
		"1.1.1.1:443": true, "[2606:4700::1111]:443": true, "not an address": false,
	} {
		if got := dialCheck("tcp", addr, nil) == nil; got != ok {
			t.Errorf("dialCheck(%s) allows = %v, want %v", addr, got, ok)
		}
	}
}
