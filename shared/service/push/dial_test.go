package push

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/push"
)

// loopCaller is the dialer function behind a JSON round trip, as a
// synchronous Invoke carries it.
type loopCaller struct {
	d     Direct
	calls int
	fail  error
}

func (c *loopCaller) Call(ctx context.Context, payload []byte) ([]byte, error) {
	c.calls++
	if c.fail != nil {
		return nil, c.fail
	}
	var r DialRequest
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, err
	}
	a, err := c.d.Handler()(ctx, r)
	if err != nil {
		return nil, err
	}
	return json.Marshal(a)
}

// The sender's request goes to the dialer as it is (URL, body, the
// wake's Authorization) and its answer comes back: the status decides the
// outcome, as when the sender dialled itself.
func TestRemoteDialCarriesTheRequestAndItsAnswer(t *testing.T) {
	var got struct {
		body, auth, ctype string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.body, got.auth, got.ctype = string(b), r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		w.WriteHeader(http.StatusGone)
		_, _ = w.Write([]byte(`{"status":"gone"}`))
	}))
	defer srv.Close()
	c := &loopCaller{d: Direct{Client: NewClient(push.Policy{AllowPrivate: true})}}
	s := &Service{Dialer: Remote{Call: c}}
	status, body, err := s.dial(context.Background(), DialRequest{URL: srv.URL, Body: []byte(`{"id":"x"}`), Authorization: "Nostr abc"})
	if err != nil || status != http.StatusGone || string(body) != `{"status":"gone"}` {
		t.Fatalf("dial: %d %q %v", status, body, err)
	}
	if got.body != `{"id":"x"}` || got.auth != "Nostr abc" || got.ctype != "application/json" {
		t.Errorf("the receiver got %+v", got)
	}
	if out, _ := classify(status, err); out != gone || c.calls != 1 {
		t.Errorf("outcome %v after %d calls, want gone after 1", out, c.calls)
	}
	if s.tryTimeout() != claimFor-recordMargin {
		t.Errorf("a remote try's budget is %s", s.tryTimeout())
	}
	// A request the sender would stop waiting for before its own deadline
	// is not made: once the sender gave up, nothing is sent behind it.
	before := got.body
	got.body = ""
	a, err := c.d.Dial(context.Background(), DialRequest{URL: srv.URL, Body: []byte(`{"id":"late"}`),
		NotAfter: time.Now().Add(push.RequestTimeout - time.Second).UnixMilli()})
	if err != nil || a.Error == "" || a.Status != 0 || got.body != "" {
		t.Errorf("late request: %+v %v, receiver got %q (before: %q)", a, err, got.body, before)
	}
}

// The non-public address check stays at the dial: the dialer function
// refuses a callback to this machine and says why; the sender counts it a
// failed try. A dialer that cannot be reached is a failed try too, never
// a delivery.
func TestRemoteDialRefusesPrivateAddressesAtTheDialer(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	c := &loopCaller{d: Direct{Client: NewClient(push.Policy{})}}
	s := &Service{Dialer: Remote{Call: c}}
	status, _, err := s.dial(context.Background(), DialRequest{URL: srv.URL, Body: []byte(`{}`)})
	if !errors.Is(err, errPrivate) || hits != 0 {
		t.Fatalf("private callback: status %d, err %v, %d hits", status, err, hits)
	}
	if out, _ := classify(status, err); out != failed {
		t.Errorf("outcome %v, want failed", out)
	}
	for _, u := range []string{"ftp://example.com/x", "file:///etc/passwd"} {
		a, err := c.d.Dial(context.Background(), DialRequest{URL: u})
		if err != nil || a.Error == "" || a.Status != 0 {
			t.Errorf("%s: %+v %v, want refused", u, a, err)
		}
	}
	c.fail = errors.New("TooManyRequestsException")
	status, _, err = s.dial(context.Background(), DialRequest{URL: "https://example.com/cb"})
	if out, _ := classify(status, err); out != failed || err == nil {
		t.Errorf("unreachable dialer: outcome %v, err %v; want failed", out, err)
	}
}
