package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func openConn(t *testing.T, im sessionstest.Impl, id, community string, expires int64) {
	t.Helper()
	now := time.Now().Unix()
	if expires == 0 {
		expires = now + 7200
	}
	err := im.Store.OpenConnection(context.Background(), session.Connection{ID: id, Community: community,
		RelayURLs: []string{"ws://x.test"}, Challenge: "ch-" + id, ConnectedAt: now, ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
}

func newSub(conn, sub, pubkey, community string, pins ...string) session.NewSubscription {
	return session.NewSubscription{Subscription: session.Subscription{Connection: conn, Sub: sub, Pubkey: pubkey,
		Filters: `[{"kinds":[9]}]`}, Community: community, Pins: pins, CreatedAt: time.Now().Unix()}
}

func keysOf(subs []session.Subscription) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Connection + "/" + s.Sub
	}
	slices.Sort(out)
	return out
}

// TestSessionStoreConnectionLifecycle: a connection is found while live,
// its challenge is marked sent once, AUTH records its key, and closing it
// forgets it with its subscriptions; an expired one is unknown.
func TestSessionStoreConnectionLifecycle(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		now := time.Now().Unix()
		openConn(t, im, "A=", "c1", 0)
		openConn(t, im, "old=", "c1", now-1)
		if _, err := im.Store.Connection(ctx, "old=", now); !errors.Is(err, session.ErrUnknownConnection) {
			t.Fatalf("expired connection: %v", err)
		}
		if _, err := im.Store.Connection(ctx, "none=", now); !errors.Is(err, session.ErrUnknownConnection) {
			t.Fatalf("unknown connection: %v", err)
		}
		c, err := im.Store.Connection(ctx, "A=", now)
		if err != nil || c.Community != "c1" || c.Challenge != "ch-A=" || c.ChallengeSent || c.Pubkey != "" || !slices.Equal(c.RelayURLs, []string{"ws://x.test"}) {
			t.Fatalf("connection: %+v %v", c, err)
		}
		var first atomic.Int32
		testkit.AtOnce(8, func(int) {
			if ok, err := im.Store.MarkChallengeSent(ctx, "A="); err == nil && ok {
				first.Add(1)
			}
		})
		if first.Load() != 1 {
			t.Fatalf("challenge marked first %d times", first.Load())
		}
		if err := im.Store.Authenticate(ctx, "A=", "pk1"); err != nil {
			t.Fatal(err)
		}
		if err := im.Store.Authenticate(ctx, "none=", "pk1"); !errors.Is(err, session.ErrUnknownConnection) {
			t.Fatalf("authenticate unknown: %v", err)
		}
		if c, _ := im.Store.Connection(ctx, "A=", now); c == nil || c.Pubkey != "pk1" || !c.ChallengeSent {
			t.Fatalf("after AUTH: %+v", c)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("A=", "s", "pk1", "c1", ""), session.Limits{PerConnection: 2})); err != nil {
			t.Fatal(err)
		}
		if err := im.Store.CloseConnection(ctx, "A="); err != nil {
			t.Fatal(err)
		}
		if _, err := im.Store.Connection(ctx, "A=", now); !errors.Is(err, session.ErrUnknownConnection) {
			t.Fatalf("closed connection: %v", err)
		}
		if subs, err := im.Store.AudienceRange(ctx, session.AudienceRangeParams{Community: "c1", Channels: nil, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF", Now: now}); err != nil || len(subs) != 0 {
			t.Fatalf("closed connection's subscriptions: %v %v", subs, err)
		}
		if err := im.Store.CloseConnection(ctx, "A="); err != nil {
			t.Fatalf("closing twice: %v", err)
		}
	})
}

// TestSessionStoreLimitPerConnectionExactUnderConcurrency: of many
// concurrent REQs of one connection, exactly the limit is stored; a
// replaced subscription keeps counting once and may be replaced while the
// connection is full; an ended one makes room.
func TestSessionStoreLimitPerConnectionExactUnderConcurrency(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		openConn(t, im, "A=", "c1", 0)
		const sent, limit = 60, 20
		errs := make([]error, sent)
		testkit.AtOnce(sent, func(i int) {
			errs[i] = subErr(im.Store.Subscribe(ctx, newSub("A=", fmt.Sprintf("s%02d", i), "pk", "c1", fmt.Sprint(i)), session.Limits{PerConnection: limit}))
		})
		stored, in := 0, ""
		for i, err := range errs {
			switch {
			case err == nil:
				stored++
				in = fmt.Sprintf("s%02d", i)
			case !errors.Is(err, session.ErrConnectionFull):
				t.Fatalf("sub %d: %v", i, err)
			}
		}
		if stored != limit {
			t.Fatalf("stored %d of %d, limit %d", stored, sent, limit)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("A=", in, "pk", "c1", "other"), session.Limits{PerConnection: limit})); err != nil {
			t.Fatalf("replacing on a full connection: %v", err)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("A=", "new", "pk", "c1"), session.Limits{PerConnection: limit})); !errors.Is(err, session.ErrConnectionFull) {
			t.Fatalf("past the limit: %v", err)
		}
		if ended, err := im.Store.EndSubscription(ctx, "A=", in); err != nil || !ended {
			t.Fatalf("end: %v %v", ended, err)
		}
		if ended, err := im.Store.EndSubscription(ctx, "A=", in); err != nil || ended {
			t.Fatalf("end twice: %v %v", ended, err)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("A=", "new", "pk", "c1"), session.Limits{PerConnection: limit})); err != nil {
			t.Fatalf("after an end: %v", err)
		}
	})
}

// TestSessionStoreLimitPerKeyExactUnderConcurrency: one key's REQs over
// several connections store exactly the per-key limit in a community
// (another community and another key are apart), and a closed connection's
// subscriptions make room.
func TestSessionStoreLimitPerKeyExactUnderConcurrency(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		im.Community(t, "c2")
		lim := session.Limits{PerConnection: 10, PerKey: 15}
		conns := []string{"A=", "B=", "C=", "D="}
		for _, c := range conns {
			openConn(t, im, c, "c1", 0)
		}
		openConn(t, im, "E=", "c2", 0)
		errs := make([]error, 40)
		testkit.AtOnce(len(errs), func(i int) {
			errs[i] = subErr(im.Store.Subscribe(ctx, newSub(conns[i%4], fmt.Sprintf("s%02d", i), "pk", "c1", ""), lim))
		})
		stored := 0
		for i, err := range errs {
			if err == nil {
				stored++
			} else if !errors.Is(err, session.ErrKeyFull) && !errors.Is(err, session.ErrConnectionFull) {
				t.Fatalf("sub %d: %v", i, err)
			}
		}
		if stored != lim.PerKey {
			t.Fatalf("stored %d, per-key limit %d", stored, lim.PerKey)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("A=", "x", "pk", "c1"), lim)); !errors.Is(err, session.ErrKeyFull) && !errors.Is(err, session.ErrConnectionFull) {
			t.Fatalf("past the key's limit: %v", err)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("A=", "other-key", "pk2", "c1"), lim)); err != nil && !errors.Is(err, session.ErrConnectionFull) {
			t.Fatalf("another key: %v", err)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("E=", "x", "pk", "c2"), lim)); err != nil {
			t.Fatalf("another community: %v", err)
		}
		if err := im.Store.CloseConnection(ctx, "B="); err != nil {
			t.Fatal(err)
		}
		if err := subErr(im.Store.Subscribe(ctx, newSub("D=", "after-close", "pk", "c1"), lim)); err != nil && !errors.Is(err, session.ErrConnectionFull) {
			t.Fatalf("after a close: %v", err)
		}
	})
}

// TestSessionStoreBurstRefusedOnlyAtItsLimit: a burst of one key's REQs
// on one connection, its key's limit above the connection's, stores
// exactly the connection's limit and refuses the rest for the connection
// alone: the key's set, taken with them, never refuses a key under its
// limit (ids the connection's set refuses are no place in it).
func TestSessionStoreBurstRefusedOnlyAtItsLimit(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		openConn(t, im, "A=", "c1", 0)
		lim := session.Limits{PerConnection: 20, PerKey: 60}
		errs := make([]error, 200)
		testkit.AtOnce(len(errs), func(i int) {
			errs[i] = subErr(im.Store.Subscribe(ctx, newSub("A=", fmt.Sprintf("s%03d", i), "pk", "c1", ""), lim))
		})
		stored := 0
		for i, err := range errs {
			switch {
			case err == nil:
				stored++
			case !errors.Is(err, session.ErrConnectionFull):
				t.Fatalf("sub %d: %v, want stored or the connection's refusal", i, err)
			}
		}
		if stored != lim.PerConnection {
			t.Fatalf("stored %d of %d, want exactly the connection's %d", stored, len(errs), lim.PerConnection)
		}
	})
}

// TestSessionStoreRefusalHoldsNoPlaceInTheOtherLimit protects the limits
// when both are taken at once (DynamoDB: the connection's set and the
// key's set in one round trip): a subscription the connection's limit
// refuses holds no place among its key's, one the key's limit refuses
// none among its connection's, and one for a connection that is gone
// none among its key's; a replaced subscription keeps its place in both.
func TestSessionStoreRefusalHoldsNoPlaceInTheOtherLimit(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		openConn(t, im, "A=", "c1", 0)
		openConn(t, im, "B=", "c1", 0)
		lim := session.Limits{PerConnection: 1, PerKey: 2}
		must := func(err error, want error, what string) {
			t.Helper()
			if (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
				t.Fatalf("%s: %v, want %v", what, err, want)
			}
		}
		must(subErr(im.Store.Subscribe(ctx, newSub("A=", "a", "pk", "c1", ""), lim)), nil, "first of A")
		must(subErr(im.Store.Subscribe(ctx, newSub("A=", "b", "pk", "c1", ""), lim)), session.ErrConnectionFull, "second of A")
		if err := subErr(im.Store.Subscribe(ctx, newSub("gone=", "g", "pk", "c1", ""), lim)); !errors.Is(err, session.ErrUnknownConnection) {
			t.Fatalf("a connection that was never opened: %v, want ErrUnknownConnection", err)
		}
		openConn(t, im, "old=", "c1", time.Now().Unix()-1)
		if err := subErr(im.Store.Subscribe(ctx, newSub("old=", "o", "pk", "c1", ""), lim)); !errors.Is(err, session.ErrUnknownConnection) {
			t.Fatalf("an expired connection: %v, want ErrUnknownConnection", err)
		}
		// Neither refused subscription took a place among the key's two.
		must(subErr(im.Store.Subscribe(ctx, newSub("B=", "c", "pk", "c1", ""), lim)), nil, "first of B")
		must(subErr(im.Store.Subscribe(ctx, newSub("A=", "a", "pk", "c1", "x"), lim)), nil, "A's replaced")
		// The key holds its two: B's second is refused by the key and
		// takes no place among B's own.
		lim.PerConnection = 2
		must(subErr(im.Store.Subscribe(ctx, newSub("B=", "d", "pk", "c1", ""), lim)), session.ErrKeyFull, "third of the key")
		must(subErr(im.Store.Subscribe(ctx, newSub("B=", "e", "pk2", "c1", ""), lim)), nil, "B's second, another key")
		must(subErr(im.Store.Subscribe(ctx, newSub("B=", "f", "pk2", "c1", ""), lim)), session.ErrConnectionFull, "B's third")
		subs, err := im.Store.SubscriptionsByKey(ctx, "c1", [][2]string{{"A=", "a"}, {"A=", "b"}, {"B=", "c"}, {"B=", "d"}, {"B=", "e"}, {"B=", "f"}, {"gone=", "g"}, {"old=", "o"}}, time.Now().Unix())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := keysOf(subs), []string{"A=/a", "B=/c", "B=/e"}; !slices.Equal(got, want) {
			t.Fatalf("stored %v, want %v", got, want)
		}
	})
}

// TestSessionStoreAudience: an event's audience is the subscriptions
// pinned to its channel or to the any-channel bucket, each once, split
// by connection into ranges that cover it exactly, up to the commit's
// cutoff; ended subscriptions and expired connections are absent.
func TestSessionStoreAudience(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		im.Community(t, "c2")
		lim := session.Limits{PerConnection: 20}
		now := time.Now().Unix()
		for i := range 7 {
			openConn(t, im, fmt.Sprintf("K%d=", i), "c1", 0)
		}
		// "old=" expires ten minutes on: live while the test builds its
		// subscriptions however slow the machine, expired at "later".
		openConn(t, im, "old=", "c1", now+600)
		openConn(t, im, "Z=", "c2", 0)
		sub := func(conn, id string, pins ...string) {
			t.Helper()
			if err := subErr(im.Store.Subscribe(ctx, newSub(conn, id, "pk", "c1", pins...), lim)); err != nil {
				t.Fatal(err)
			}
		}
		sub("K0=", "a", "x")
		sub("K0=", "b", "", "x") // both buckets: once
		sub("K1=", "a", "y")     // another channel
		sub("K2=", "a", "")
		sub("K3=", "a", "x")
		sub("K4=", "a", "x")
		sub("K5=", "ended", "x")
		sub("old=", "a", "x")
		if err := subErr(im.Store.Subscribe(ctx, newSub("Z=", "a", "pk", "c2", "x"), lim)); err != nil {
			t.Fatal(err)
		}
		if _, err := im.Store.EndSubscription(ctx, "K5=", "ended"); err != nil {
			t.Fatal(err)
		}
		cutoff, err := im.Store.Cutoff(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sub("K6=", "late", "x") // after the commit: not its audience
		later := now + 601      // "old=" has expired
		want := []string{"K0=/a", "K0=/b", "K2=/a", "K3=/a", "K4=/a"}
		all, err := im.Store.AudienceRange(ctx, session.AudienceRangeParams{Community: "c1", Channels: []string{"x"}, Cutoff: cutoff, After: "", Through: "\U0010FFFF", Now: later})
		if err != nil || !slices.Equal(keysOf(all), want) {
			t.Fatalf("audience: %v %v, want %v", keysOf(all), err, want)
		}
		bounds, err := im.Store.AudienceBounds(ctx, "c1", []string{"x"}, 2)
		if err != nil || len(bounds) == 0 {
			t.Fatalf("bounds: %v %v", bounds, err)
		}
		var parts []session.Subscription
		after := ""
		for _, through := range bounds {
			p, err := im.Store.AudienceRange(ctx, session.AudienceRangeParams{Community: "c1", Channels: []string{"x"}, Cutoff: cutoff, After: after, Through: through, Now: later})
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p...)
			after = through
		}
		if !slices.Equal(keysOf(parts), want) {
			t.Fatalf("parts: %v, want %v", keysOf(parts), want)
		}
		got, err := im.Store.SubscriptionsByKey(ctx, "c1", [][2]string{{"K0=", "a"}, {"K5=", "ended"}, {"Z=", "a"}}, later)
		if err != nil || !slices.Equal(keysOf(got), []string{"K0=/a"}) {
			t.Fatalf("by key: %v %v", keysOf(got), err)
		}
	})
}

// TestSessionStoreMark: a community's last-commit mark never goes down;
// without create, a community with no mark keeps none.
func TestSessionStoreMark(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		if m, err := im.Store.Mark(ctx, "c1"); m.Exists || err != nil {
			t.Fatalf("mark before any: %v %v", m.Exists, err)
		}
		if _, exists, err := im.Store.RaiseMark(ctx, "c1", 100, false); exists || err != nil {
			t.Fatalf("raise without create: %v %v", exists, err)
		}
		if m, exists, err := im.Store.RaiseMark(ctx, "c1", 100, true); !exists || m != 100 || err != nil {
			t.Fatalf("create: %d %v %v", m, exists, err)
		}
		if m, _, err := im.Store.RaiseMark(ctx, "c1", 50, false); m != 100 || err != nil {
			t.Fatalf("lower raise: %d %v", m, err)
		}
		if m, _, err := im.Store.RaiseMark(ctx, "c1", 150, false); m != 150 || err != nil {
			t.Fatalf("raise: %d %v", m, err)
		}
		if m, err := im.Store.Mark(ctx, "c1"); !m.Exists || m.Value != 150 || err != nil {
			t.Fatalf("mark: %+v %v", m, err)
		}
	})
}

// TestSessionStoreOpenConnections: the liveness registry lists what was
// opened and neither forgotten nor expired.
func TestSessionStoreOpenConnections(t *testing.T) {
	im := sessionstest.DynamoDB(t)
	ctx := context.Background()
	now := time.Now().Unix()
	for _, id := range []string{"a=", "b=", "c="} {
		if err := im.Store.Opened(ctx, id, now+100); err != nil {
			t.Fatal(err)
		}
	}
	if err := im.Store.Opened(ctx, "old=", now-1); err != nil {
		t.Fatal(err)
	}
	if err := im.Store.ForgetOpen(ctx, "b="); err != nil {
		t.Fatal(err)
	}
	openConn(t, im, "c=", "c1", 0)
	if err := im.Store.CloseConnection(ctx, "c="); err != nil {
		t.Fatal(err)
	}
	ids, err := im.Store.OpenConnections(ctx, now)
	if err != nil || !slices.Equal(ids, []string{"a="}) {
		t.Fatalf("open: %v %v", ids, err)
	}
	if ids, _ := im.Store.OpenConnections(ctx, now+200); len(ids) != 0 {
		t.Fatalf("after their expiry: %v", ids)
	}
}

// TestSessionStoreSubscribeKnowingTheExpiry: a subscription stored with
// the connection's expiry known (NewSubscription.Expires: DynamoDB then
// writes it alongside its limits' checks) obeys the same contract: one
// a limit refuses, or whose connection is gone, is neither stored nor in
// any audience; a replaced one leaves no entry of a pin it no longer
// has; and one stored with an expiry other than its connection's lives as
// long as the connection.
func TestSessionStoreSubscribeKnowingTheExpiry(t *testing.T) {
	sessionstest.Each(t, func(t *testing.T, im sessionstest.Impl) {
		ctx := context.Background()
		im.Community(t, "c1")
		now := time.Now().Unix()
		openConn(t, im, "A=", "c1", now+7200)
		openConn(t, im, "B=", "c1", now+7200)
		openConn(t, im, "C=", "c1", now+7200)
		known := func(s session.NewSubscription, expires int64) session.NewSubscription {
			s.Expires = expires
			return s
		}
		audience := func(at int64, channels ...string) []string {
			t.Helper()
			subs, err := im.Store.AudienceRange(ctx, session.AudienceRangeParams{Community: "c1", Channels: channels, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF", Now: at})
			if err != nil {
				t.Fatal(err)
			}
			return keysOf(subs)
		}
		lim := session.Limits{PerConnection: 1, PerKey: 2}
		if err := subErr(im.Store.Subscribe(ctx, known(newSub("A=", "a", "pk", "c1", "y"), now+7200), lim)); err != nil {
			t.Fatal(err)
		}
		if err := subErr(im.Store.Subscribe(ctx, known(newSub("A=", "b", "pk", "c1", "x"), now+7200), lim)); !errors.Is(err, session.ErrConnectionFull) {
			t.Fatalf("second of A: %v", err)
		}
		if err := subErr(im.Store.Subscribe(ctx, known(newSub("gone=", "g", "pk", "c1", "x"), now+7200), lim)); !errors.Is(err, session.ErrUnknownConnection) {
			t.Fatalf("a connection that was never opened: %v, want ErrUnknownConnection", err)
		}
		if err := subErr(im.Store.Subscribe(ctx, known(newSub("B=", "c", "pk", "c1", "x"), now+7200), lim)); err != nil {
			t.Fatal(err)
		}
		lim.PerConnection = 2
		if err := subErr(im.Store.Subscribe(ctx, known(newSub("B=", "d", "pk", "c1", "x"), now+7200), lim)); !errors.Is(err, session.ErrKeyFull) {
			t.Fatalf("third of the key: %v", err)
		}
		if got, want := audience(now, "x"), []string{"B=/c"}; !slices.Equal(got, want) {
			t.Fatalf("audience of x %v, want %v (refused ones absent)", got, want)
		}
		subs, err := im.Store.SubscriptionsByKey(ctx, "c1", [][2]string{{"A=", "a"}, {"A=", "b"}, {"B=", "c"}, {"B=", "d"}, {"gone=", "g"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := keysOf(subs), []string{"A=/a", "B=/c"}; !slices.Equal(got, want) {
			t.Fatalf("stored %v, want %v", got, want)
		}
		// Replaced: pinned to x now, no longer to y.
		if err := subErr(im.Store.Subscribe(ctx, known(newSub("A=", "a", "pk", "c1", "x"), now+7200), lim)); err != nil {
			t.Fatal(err)
		}
		if got := audience(now, "y"); len(got) != 0 {
			t.Fatalf("audience of y after the replacement: %v", got)
		}
		if got, want := audience(now, "x"), []string{"A=/a", "B=/c"}; !slices.Equal(got, want) {
			t.Fatalf("audience of x %v, want %v", got, want)
		}
		// The caller's view of the expiry is stale: the subscription
		// lives as long as its connection.
		if err := subErr(im.Store.Subscribe(ctx, known(newSub("C=", "e", "pk2", "c1", "z"), now+5), lim)); err != nil {
			t.Fatal(err)
		}
		if got, want := audience(now+600, "z"), []string{"C=/e"}; !slices.Equal(got, want) {
			t.Fatalf("audience of z ten minutes on %v, want %v", got, want)
		}
	})
}

// stored is Store.Subscribe's error alone.
func subErr(_ session.Held, err error) error { return err }
