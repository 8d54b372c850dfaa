package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/netpolicy"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// outcome is what one try of a delivery came to.
type outcome int

const (
	delivered outcome = iota // acknowledged (2xx)
	gone                     // 404/410 or an invalid endpoint: drop the subscription
	failed                   // anything else: retried with backoff
)

// try sends one claimed delivery and records its outcome under its claim
// (store.PushDeliveriesSetClaimed), in its own transaction: sent,
// retried with backoff, or dead.
// until bounds the request (dial.go: a dialer function makes none it
// could not finish by then), so its outcome is recorded while the claim
// holds.
func (s *Service) try(ctx context.Context, community string, c store.PushClaim, p store.PendingPush, l *live, e *event, until time.Time) error {
	var out outcome
	var why error
	dctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	switch p.Kind {
	case kinds.PushSubscription:
		out, why = s.callback(dctx, l, e)
	case kinds.PushLease:
		out, why = s.wake(dctx, community, l)
	default:
		out, why = gone, fmt.Errorf("kind %d", p.Kind)
	}
	now := s.now().Unix()
	attempts := c.Attempts + 1
	state, next := store.PushDead, now
	switch {
	case out == delivered:
		state = store.PushSent
	case out == gone:
		s.log().InfoContext(ctx, "push: target gone, subscription dropped", "community", community, "pubkey", p.Pubkey, "kind", p.Kind, "d", p.D, "why", why)
	case attempts < push.MaxAttempts:
		s.log().WarnContext(ctx, "push: delivery failed, will retry", "community", community, "pubkey", p.Pubkey, "d", p.D, "attempt", attempts, "err", why)
		state, next = store.PushPending, now+int64(push.Backoff(attempts)/time.Second)
	default:
		s.log().WarnContext(ctx, "push: delivery dead after its last attempt", "community", community, "pubkey", p.Pubkey, "d", p.D, "attempts", attempts, "err", why)
	}
	ok, err := s.Store.PushDeliveriesSetClaimed(ctx, community, c, state, attempts, next, now)
	if err != nil {
		return err
	}
	if !ok {
		// The claim lapsed before the outcome was recorded (claimFor) and
		// the row moved on: whatever holds it now records its own.
		s.log().WarnContext(ctx, "push: a try outlived its claim", "community", community, "pubkey", p.Pubkey, "d", p.D, "state", state)
		return nil
	}
	switch {
	case state == store.PushSent:
		return s.Store.PushSubscriptionsSetSucceeded(ctx, community, p.PushAddress)
	case state == store.PushDead:
		_, err := s.Store.PushSubscriptionsSetFailed(ctx, community, p.PushAddress, out == gone, push.DropAfterFailures, now)
		return err
	}
	return nil
}

// callback POSTs a NIP-9a callback: {id, relay, event?}.
func (s *Service) callback(ctx context.Context, l *live, e *event) (outcome, error) {
	body, err := push.CallbackBody(e.ID, l.row.Relay, e.Raw, l.row.IncludeEvent)
	if err != nil {
		return failed, err
	}
	if _, err := url.Parse(l.row.Target); err != nil {
		return gone, fmt.Errorf("callback URL: %w", err)
	}
	status, _, err := s.dial(ctx, DialRequest{URL: l.row.Target, Body: body})
	return classify(status, err)
}

// classify maps an HTTP answer to an outcome: 2xx delivered, 404 and 410
// gone, anything else (and no answer) failed.
func classify(status int, err error) (outcome, error) {
	switch {
	case err != nil:
		return failed, err
	case status >= 200 && status < 300:
		return delivered, nil
	case status == http.StatusNotFound || status == http.StatusGone:
		return gone, fmt.Errorf("answered %d", status)
	}
	return failed, fmt.Errorf("answered %d", status)
}

// errPrivate is a connection refused by the callback policy.
var errPrivate = errors.New("push: callback resolves to an address that is not public")

// dialCheck is the dialer's Control: every address a connection is about
// to be made to, after resolution, must be netpolicy.PublicAddr.
func dialCheck(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !netpolicy.PublicAddr(ap.Addr()) {
		return errPrivate
	}
	return nil
}

// NewClient is the HTTP client of callbacks and wakes: no redirects
// followed (a redirect is a failure), no proxy, and, unless p allows
// private addresses, a dialer that refuses every address netpolicy.PublicAddr
// refuses, after DNS resolution and for every address tried (so a name
// that resolves to a private address, or rebinds to one, never connects).
func NewClient(p push.Policy) *http.Client {
	d := &net.Dialer{Timeout: push.RequestTimeout}
	if !p.AllowPrivate {
		d.Control = dialCheck
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   push.RequestTimeout,
		ResponseHeaderTimeout: push.RequestTimeout,
	}
	return &http.Client{
		Transport:     t,
		Timeout:       push.RequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
