package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// The test callback receiver: what a NIP-9a push server (coracle-social's
// nps) gets from the relay, by path.
type callbacks struct {
	mu sync.Mutex
	// got are the acknowledged callbacks by path; requests every request
	// by path, acknowledged or not.
	got      map[string][]callbackBody
	requests map[string]int
	// status answers a path (200 unless set); hold, when set, is called
	// before answering and may return false to leave the request
	// unanswered (the sender's process crashed mid-request).
	status map[string]int
	hold   func(r *http.Request, n int) bool
	srv    *httptest.Server
}

type callbackBody struct {
	ID    string       `json:"id"`
	Relay string       `json:"relay"`
	Event *nostr.Event `json:"event"`
	Raw   map[string]json.RawMessage
}

// closeOnce closes g unless it is closed.
func closeOnce(g chan struct{}) {
	select {
	case <-g:
	default:
		close(g)
	}
}

func newCallbacks(t *testing.T) *callbacks {
	c := &callbacks{got: map[string][]callbackBody{}, requests: map[string]int{}, status: map[string]int{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.requests[r.URL.Path]++
		n := c.requests[r.URL.Path]
		status, hold := c.status[r.URL.Path], c.hold
		c.mu.Unlock()
		if hold != nil && !hold(r, n) {
			return
		}
		if status == 0 {
			status = http.StatusOK
		}
		if status == http.StatusOK {
			var b callbackBody
			if err := json.Unmarshal(body, &b); err != nil {
				t.Errorf("callback body %s: %v", body, err)
			}
			_ = json.Unmarshal(body, &b.Raw)
			c.mu.Lock()
			c.got[r.URL.Path] = append(c.got[r.URL.Path], b)
			c.mu.Unlock()
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *callbacks) url(path string) string { return c.srv.URL + path }

// ids are the event ids path acknowledged, in order.
func (c *callbacks) ids(path string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, b := range c.got[path] {
		out = append(out, b.ID)
	}
	return out
}

func (c *callbacks) bodies(path string) []callbackBody {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]callbackBody(nil), c.got[path]...)
}

func (c *callbacks) requested(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests[path]
}

// subscribe9a publishes u's NIP-9a subscription d: filters, callback, and
// include_event when include.
func subscribe9a(t *testing.T, r *Relay, rl *nostr.Relay, u user, d, callback string, include bool, filters ...string) nostr.Event {
	t.Helper()
	tags := nostr.Tags{{"d", d}, {"relay", r.WSURL + "/"}, {"callback", callback}}
	for _, f := range filters {
		tags = append(tags, nostr.Tag{"filter", f})
	}
	if include {
		tags = append(tags, nostr.Tag{"include_event", "true"})
	}
	return publish(t, rl, u, 30390, tags, "")
}

// pushWatch wraps the push sender of a relay: it records the events of
// every batch that ran to the end, and holds batches at a gate while one
// is set.
type pushWatch struct {
	mu   sync.Mutex
	done map[string]bool
	gate atomic.Pointer[chan struct{}]
}

func watchPush(r *Relay) *pushWatch {
	w := &pushWatch{done: map[string]bool{}}
	real := r.Lambda.Functions[emulator.PushSenderFunction]
	r.Lambda.Functions[emulator.PushSenderFunction] = func(ctx context.Context, p json.RawMessage) error {
		if g := w.gate.Load(); g != nil {
			<-*g
		}
		err := real(ctx, p)
		if err == nil {
			var b struct{ IDs []string }
			_ = json.Unmarshal(p, &b)
			w.mu.Lock()
			for _, id := range b.IDs {
				w.done[id] = true
			}
			w.mu.Unlock()
		}
		return err
	}
	return w
}

// settle waits until the batches of evs (each commit in a community with
// subscriptions hands the sender one, after its OK) have run.
func (w *pushWatch) settle(t *testing.T, evs ...nostr.Event) {
	t.Helper()
	deadline := time.Now().Add(2 * wait)
	for _, ev := range evs {
		for {
			w.mu.Lock()
			ok := w.done[ev.ID]
			w.mu.Unlock()
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the push sender never ran the batch of kind %d %s", ev.Kind, ev.ID)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestNIP9aMemberGetsOneCallbackPerReadableEvent: a member's 30390 gets one
// callback per matching event it may read, with the event when it asked
// for include_event and without it when not, and none for an event of a
// private group it is not in, another key's recipient-only kind, or an
// event deleted before the sender ran.
func TestNIP9aMemberGetsOneCallbackPerReadableEvent(t *testing.T) {
	r := StartTest(t, Options{Push: true})
	w := watchPush(r)
	cb := newCallbacks(t)
	alice, arl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	carol := testkit.NewKey(t)
	open := createChannel(t, arl, alice, "open")
	private := createChannel(t, arl, alice, "private")

	// Every kind 9 and 44200 anywhere, with the event; the open channel's
	// kind 9 by #h, without.
	subscribe9a(t, r, brl, bob, "all", cb.url("/all"), true, `{"kinds":[9,44200]}`)
	subscribe9a(t, r, brl, bob, "open", cb.url("/open"), false, `{"kinds":[9],"#h":["`+open+`"]}`)

	m1 := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "hello open")
	m2 := publish(t, arl, alice, 9, nostr.Tags{{"h", private}}, "secret")
	m44 := publish(t, arl, alice, 44200, nostr.Tags{{"p", carol.Pub}}, "carol's metric")
	// An event deleted before the sender runs: its batch waits at the
	// gate until the deletion committed.
	w.settle(t, m1, m2, m44)
	g := make(chan struct{})
	w.gate.Store(&g)
	t.Cleanup(func() { closeOnce(g) })
	m3 := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "soon gone")
	del := publish(t, arl, alice, 5, nostr.Tags{{"e", m3.ID}}, "")
	w.gate.Store(nil)
	closeOnce(g)
	w.settle(t, m3, del)
	m4 := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "hello again")
	w.settle(t, m4)

	want := []string{m1.ID, m4.ID}
	for _, path := range []string{"/all", "/open"} {
		if got := cb.ids(path); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s got callbacks for %v, want exactly %v", path, got, want)
		}
	}
	for _, b := range cb.bodies("/all") {
		if b.Event == nil || b.Event.ID != b.ID || !b.Event.CheckID() {
			t.Errorf("/all asked for include_event: callback %s carries %v", b.ID, b.Event)
		}
		if b.Relay != r.WSURL+"/" {
			t.Errorf("callback relay %q, want the subscription's %q", b.Relay, r.WSURL+"/")
		}
	}
	for _, b := range cb.bodies("/open") {
		if _, has := b.Raw["event"]; has {
			t.Errorf("/open did not ask for include_event: callback %s carries the event", b.ID)
		}
	}
	// The subscriber's own events never call back.
	w.settle(t, publish(t, brl, bob, 9, nostr.Tags{{"h", open}}, "bob talks"))
	if n := len(cb.ids("/open")); n != 2 {
		t.Errorf("bob's own message called bob back: %d callbacks", n)
	}
}

// TestNIP9aSubscriptionDroppedAfter404: a callback that answers 404 gets
// that one request and no more; the subscription is dropped.
func TestNIP9aSubscriptionDroppedAfter404(t *testing.T) {
	r := StartTest(t, Options{Push: true})
	w := watchPush(r)
	cb := newCallbacks(t)
	cb.status["/gone"] = http.StatusNotFound
	alice, arl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	open := createChannel(t, arl, alice, "open")
	subscribe9a(t, r, brl, bob, "gone", cb.url("/gone"), false, `{"kinds":[9]}`)
	w.settle(t, publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "one"))
	// A commit after the drop hands the sender no batch once the instance
	// knows the community has no live subscription left, or a batch that
	// matches nothing: either way no request.
	publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "two")
	time.Sleep(1100 * time.Millisecond) // its batch, if any, ran; and a newer created_at for the new version
	r.Lambda.Wait()
	if n := cb.requested("/gone"); n != 1 {
		t.Errorf("a callback answering 404 got %d requests, want 1 (then dropped)", n)
	}
	// Publishing the subscription again (a new version) revives it.
	cb.mu.Lock()
	cb.status["/gone"] = http.StatusOK
	cb.mu.Unlock()
	subscribe9a(t, r, brl, bob, "gone", cb.url("/gone"), false, `{"kinds":[9]}`)
	m := publish(t, arl, alice, 9, nostr.Tags{{"h", open}}, "three")
	w.settle(t, m)
	if got := cb.ids("/gone"); len(got) != 1 || got[0] != m.ID {
		t.Errorf("a new version of the dropped subscription got %v, want [%s]", got, m.ID)
	}
}

// TestNIP9aRefusesBadSubscriptions: a 30390 that breaks a rule is refused
// invalid: or restricted: and changes nothing; another key never reads
// someone's subscription.
func TestNIP9aRefusesBadSubscriptions(t *testing.T) {
	r := StartTest(t, Options{Push: true})
	alice, arl := loggedIn(t, r)
	bob, brl := loggedIn(t, r)
	relayTag := nostr.Tag{"relay", r.WSURL}
	cases := []struct {
		name, prefix string
		tags         nostr.Tags
	}{
		{"no callback", "invalid:", nostr.Tags{{"d", "a"}, relayTag, {"filter", `{"kinds":[9]}`}}},
		{"two callbacks", "invalid:", nostr.Tags{{"d", "a"}, relayTag, {"filter", `{"kinds":[9]}`}, {"callback", "http://127.0.0.1:1/a"}, {"callback", "http://127.0.0.1:1/b"}}},
		{"no filter", "invalid:", nostr.Tags{{"d", "a"}, relayTag, {"callback", "http://127.0.0.1:1/a"}}},
		{"filter not JSON", "invalid:", nostr.Tags{{"d", "a"}, relayTag, {"filter", `{kinds`}, {"callback", "http://127.0.0.1:1/a"}}},
		{"search filter", "invalid:", nostr.Tags{{"d", "a"}, relayTag, {"filter", `{"search":"x"}`}, {"callback", "http://127.0.0.1:1/a"}}},
		{"relay not a websocket URL", "invalid:", nostr.Tags{{"d", "a"}, {"relay", "https://elsewhere.example"}, {"filter", `{"kinds":[9]}`}, {"callback", "http://127.0.0.1:1/a"}}},
		{"ftp callback", "invalid:", nostr.Tags{{"d", "a"}, relayTag, {"filter", `{"kinds":[9]}`}, {"callback", "ftp://example.com/a"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantPrefix(t, refused(t, brl, signed(t, bob, 30390, c.tags, "")), c.prefix)
		})
	}
	for i := range 10 {
		subscribe9a(t, r, brl, bob, "s"+string(rune('a'+i)), "http://127.0.0.1:1/x", false, `{"kinds":[9]}`)
	}
	over := signed(t, bob, 30390, nostr.Tags{{"d", "eleventh"}, relayTag, {"filter", `{"kinds":[9]}`}, {"callback", "http://127.0.0.1:1/x"}}, "")
	wantPrefix(t, refused(t, brl, over), "restricted:")
	// Author-only: alice reads none of bob's subscriptions.
	sub, err := arl.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{30390}, Authors: []string{bob.Pub}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-sub.Events:
		t.Errorf("alice read bob's push subscription %s", ev.ID)
	case <-sub.EndOfStoredEvents:
	case <-time.After(wait):
		t.Fatal("no EOSE")
	}
	_ = alice
}
