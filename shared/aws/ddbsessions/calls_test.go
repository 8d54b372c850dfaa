package ddbsessions_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
)

// counting is a DynamoDB client that counts the requests it sends.
type counting struct {
	ddbsessions.API
	n atomic.Int64
}

func (c *counting) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.n.Add(1)
	return c.API.GetItem(ctx, in, o...)
}

func (c *counting) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.n.Add(1)
	return c.API.PutItem(ctx, in, o...)
}

func (c *counting) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n.Add(1)
	return c.API.UpdateItem(ctx, in, o...)
}

func (c *counting) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.n.Add(1)
	return c.API.DeleteItem(ctx, in, o...)
}

func (c *counting) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.n.Add(1)
	return c.API.Query(ctx, in, o...)
}

func (c *counting) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.n.Add(1)
	return c.API.BatchWriteItem(ctx, in, o...)
}

func (c *counting) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.n.Add(1)
	return c.API.BatchGetItem(ctx, in, o...)
}

// TestSubscribeRequestsPerREQ protects what a live REQ costs the session
// store: the connection's set, the key's set, then the subscription item
// and its audience entries (written at once, or, with the connection's
// expiry known, all four at once): four requests, the key set's expiry
// rewritten only when a later connection of the key needs it longer. It
// counts requests on the local DynamoDB (source localdev/ddb.sh); the
// figures in time are docs/benchmarks.md's.
func TestSubscribeRequestsPerREQ(t *testing.T) {
	for _, known := range []bool{false, true} {
		t.Run(map[bool]string{false: "expiry-unknown", true: "expiry-known"}[known], func(t *testing.T) { subscribeRequests(t, known) })
	}
}

func subscribeRequests(t *testing.T, known bool) {
	im := sessionstest.DynamoDB(t)
	c := &counting{API: im.API}
	st := ddbsessions.New(c, im.Table)
	ctx := context.Background()
	now := time.Now().Unix()
	expires := map[string]int64{}
	for _, id := range []string{"A=", "B="} {
		exp := now + 7200
		if id == "B=" {
			exp += 60 // a later connection of the same key
		}
		expires[id] = exp
		if err := st.OpenConnection(ctx, session.Connection{ID: id, Community: "c", Challenge: "x", ConnectedAt: now, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	sub := func(conn, id string) int64 {
		t.Helper()
		before := c.n.Load()
		s := session.NewSubscription{Subscription: session.Subscription{Connection: conn, Sub: id, Pubkey: "pk",
			Filters: `[{"kinds":[9],"#h":["ch"]}]`}, Community: "c", Pins: []string{"ch"}, CreatedAt: now}
		if known {
			s.Expires = expires[conn]
		}
		err := subErr(st.Subscribe(ctx, s, session.Limits{PerConnection: 20, PerKey: 100}))
		if err != nil {
			t.Fatal(err)
		}
		return c.n.Load() - before
	}
	for _, s := range []struct {
		conn, sub string
		want      int64
	}{
		{"A=", "q1", 4}, // the key's set is new: its expiry is the connection's
		{"A=", "q2", 4}, // the same connection again
		{"A=", "q1", 4}, // replaced
		{"B=", "q1", 5}, // a later connection: the key's set lives longer
		{"A=", "q3", 4}, // an earlier one: the set already outlives it
	} {
		if got := sub(s.conn, s.sub); got != s.want {
			t.Errorf("subscribe %s %s: %d requests, want %d", s.conn, s.sub, got, s.want)
		}
	}
}

// failingPuts is a DynamoDB client whose PutItem of a subscription item
// fails, as a throttled or refused write (an item over 400 KB) does.
type failingPuts struct{ ddbsessions.API }

func (f failingPuts) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if sk, ok := in.Item["sk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(sk.Value, "sub") {
		return nil, errors.New("refused by the test")
	}
	return f.API.PutItem(ctx, in, o...)
}

// TestSubscribeFailingPartWayLeavesNothing: when the subscription item's
// write fails after both limit sets took the id and its entries were
// written, Subscribe answers the error and ends the id wholly: no entry
// for delivery to find, and no place held in either limit (a later
// connection's subscriptions up to the limit all go in). Whether the
// connection's expiry was known (one round trip) or not.
func TestSubscribeFailingPartWayLeavesNothing(t *testing.T) {
	for _, known := range []bool{false, true} {
		t.Run(map[bool]string{false: "expiry-unknown", true: "expiry-known"}[known], func(t *testing.T) {
			im := sessionstest.DynamoDB(t)
			bad, good := ddbsessions.New(failingPuts{im.API}, im.Table), ddbsessions.New(im.API, im.Table)
			ctx := context.Background()
			now := time.Now().Unix()
			lim := session.Limits{PerConnection: 3, PerKey: 3}
			for _, id := range []string{"A=", "B="} {
				if err := good.OpenConnection(ctx, session.Connection{ID: id, Community: "c", Challenge: "x", ConnectedAt: now, ExpiresAt: now + 7200}); err != nil {
					t.Fatal(err)
				}
			}
			row := func(conn, id string) session.NewSubscription {
				s := session.NewSubscription{Subscription: session.Subscription{Connection: conn, Sub: id, Pubkey: "pk",
					Filters: `[{"kinds":[9],"#h":["ch"]}]`}, Community: "c", Pins: []string{"ch", ""}, CreatedAt: now}
				if known {
					s.Expires = now + 7200
				}
				return s
			}
			for _, id := range []string{"f1", "f2", "f3"} {
				if err := subErr(bad.Subscribe(ctx, row("A=", id), lim)); err == nil {
					t.Fatalf("subscribe %s: no error from a failed write", id)
				}
			}
			if aud, err := good.AudienceRange(ctx, session.AudienceRangeParams{Community: "c", Channels: []string{"ch"}, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF", Now: now}); err != nil || len(aud) != 0 {
				t.Fatalf("audience after failed subscribes: %v %v, want none", aud, err)
			}
			for _, s := range []session.NewSubscription{row("A=", "g1"), row("A=", "g2"), row("B=", "g3")} {
				if err := subErr(good.Subscribe(ctx, s, lim)); err != nil {
					t.Fatalf("subscribe %s on %s after the failures: %v (a failed one still holds a place)", s.Sub, s.Connection, err)
				}
			}
			// Refused (the key holds its 3) with its write failing too:
			// taken back alone, the others untouched.
			if err := subErr(bad.Subscribe(ctx, row("A=", "f4"), lim)); !errors.Is(err, session.ErrKeyFull) {
				t.Fatalf("subscribe past the key's limit: %v, want ErrKeyFull", err)
			}
			aud, err := good.AudienceRange(ctx, session.AudienceRangeParams{Community: "c", Channels: []string{"ch"}, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF", Now: now})
			if err != nil || len(aud) != 3 {
				t.Fatalf("audience after the refusal: %v %v, want g1, g2 and g3", aud, err)
			}
			if err := subErr(good.Subscribe(ctx, row("A=", "f5"), lim)); !errors.Is(err, session.ErrKeyFull) {
				t.Fatalf("subscribe past the key's limit again: %v, want ErrKeyFull (the refusal freed a place)", err)
			}
		})
	}
}

// countedConnection is a store over the local DynamoDB whose requests c
// counts, with one connection, "conn", open for an hour in community.
func countedConnection(t *testing.T, community string) (*ddbsessions.Store, *counting) {
	t.Helper()
	impl := sessionstest.DynamoDB(t)
	c := &counting{API: impl.API}
	st := ddbsessions.New(c, impl.Table)
	now := time.Now().Unix()
	if err := st.OpenConnection(context.Background(), session.Connection{ID: "conn", Community: community, Challenge: "x",
		ConnectedAt: now, ExpiresAt: now + 3600}); err != nil {
		t.Fatal(err)
	}
	return st, c
}

// TestClosesAndClaimsDoNotLengthenDisconnect: a client's CLOSEs (each
// leaves a tombstone) and a busy channel's claims are not the
// connection's items: 300 of each change nothing of what $disconnect
// (CloseConnection) reads and deletes, and a tombstone and a claim still
// answer as written.
func TestClosesAndClaimsDoNotLengthenDisconnect(t *testing.T) {
	ctx := context.Background()
	st, c := countedConnection(t, "default")
	now := time.Now().Unix()
	for i := range 300 {
		id := "s" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
		if _, err := st.CloseSubscription(ctx, "conn", id, time.Now().UnixNano()); err != nil {
			t.Fatal(err)
		}
		if won, err := st.Claim(ctx, session.ClaimParams{Connection: "conn", Sub: "live", Event: id, Until: now + 10}); err != nil || !won {
			t.Fatalf("claim %d: %v %v", i, won, err)
		}
	}
	if won, err := st.Claim(ctx, session.ClaimParams{Connection: "conn", Sub: "live", Event: "sa", Until: now + 10}); err != nil || won {
		t.Fatalf("a second claim of one event: %v %v, want refused", won, err)
	}
	if at, err := st.ClosedAt(ctx, "conn", "sa"); err != nil || at == 0 {
		t.Fatalf("the tombstone of sa: %d %v", at, err)
	}
	c.n.Store(0)
	if err := st.CloseConnection(ctx, "conn"); err != nil {
		t.Fatal(err)
	}
	if n := c.n.Load(); n > 2 {
		t.Fatalf("$disconnect after 300 CLOSEs and 300 claims sent %d requests, want at most 2 (the Query, one batch of deletes)", n)
	}
}

// TestWithdrawRemovesEverythingInOnePass: withdrawing an early answer's
// subscription (its CLOSE came while the store landed) removes the item,
// the entries of every pin it or a replacement of the same id stored, and
// the id from both limit sets, in four requests: the item's delete, then
// at once the entries' batch and the two sets' updates.
func TestWithdrawRemovesEverythingInOnePass(t *testing.T) {
	ctx := context.Background()
	st, c := countedConnection(t, "c")
	now := time.Now().Unix()
	lim := session.Limits{PerConnection: 2, PerKey: 2}
	row := func(id, pin string) session.NewSubscription {
		return session.NewSubscription{Subscription: session.Subscription{Connection: "conn", Sub: id, Pubkey: "pk",
			Filters: `[{"kinds":[9],"#h":["` + pin + `"]}]`}, Community: "c", Pins: []string{pin}, CreatedAt: now, Expires: now + 3600}
	}
	first := row("once", "ch1")
	for _, s := range []session.NewSubscription{first, row("once", "ch2")} { // then replaced: another pin
		if err := subErr(st.Subscribe(ctx, s, lim)); err != nil {
			t.Fatal(err)
		}
	}
	c.n.Store(0)
	if err := st.Withdraw(ctx, first); err != nil {
		t.Fatal(err)
	}
	if n := c.n.Load(); n != 4 {
		t.Errorf("withdraw sent %d requests, want 4", n)
	}
	if aud, err := st.AudienceRange(ctx, session.AudienceRangeParams{Community: "c", Channels: []string{"ch1", "ch2"}, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF", Now: now}); err != nil || len(aud) != 0 {
		t.Fatalf("audience after the withdraw: %v %v, want none", aud, err)
	}
	for _, id := range []string{"a", "b"} { // both places free again
		if err := subErr(st.Subscribe(ctx, row(id, "ch1"), lim)); err != nil {
			t.Fatalf("subscribe %s after the withdraw: %v", id, err)
		}
	}
}

// rounds is a DynamoDB client that counts rounds (a request sent while
// none is in flight starts one) and the most UpdateItems in flight at once.
type rounds struct {
	ddbsessions.API
	mu                                   sync.Mutex
	inflight, rounds, updates, maxUpdate int
}

func (r *rounds) start(update bool) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inflight == 0 {
		r.rounds++
	}
	r.inflight++
	if update {
		r.updates++
		r.maxUpdate = max(r.maxUpdate, r.updates)
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.inflight--
		if update {
			r.updates--
		}
	}
}

// reset starts counting anew: rounds since, and the most updates at once.
func (r *rounds) reset() { r.mu.Lock(); defer r.mu.Unlock(); r.rounds, r.maxUpdate = 0, 0 }

func (r *rounds) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	defer r.start(false)()
	return r.API.GetItem(ctx, in, o...)
}

func (r *rounds) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	defer r.start(false)()
	return r.API.PutItem(ctx, in, o...)
}

func (r *rounds) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	defer r.start(true)()
	return r.API.UpdateItem(ctx, in, o...)
}

func (r *rounds) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	defer r.start(false)()
	return r.API.BatchWriteItem(ctx, in, o...)
}

// TestMessageCountsGatherAndStayExact: the counts of one connection's
// window that come at once, on two instances (stores), each get a total
// of their own, 1 to 200 once each, as counted one by one; the instances
// send fewer writes than messages (the counts that come while a write is
// in flight go together in the next).
func TestMessageCountsGatherAndStayExact(t *testing.T) {
	im := sessionstest.DynamoDB(t)
	ctx := context.Background()
	c := &counting{API: im.API}
	stores := []*ddbsessions.Store{ddbsessions.New(c, im.Table), ddbsessions.New(c, im.Table)}
	p := session.CountParams{Community: "c", Connection: "M=", WindowStart: time.Now().Unix() / 60 * 60, Window: 60}
	const each = 100
	totals := make([]int64, 2*each)
	errs := make([]error, 2*each)
	var wg sync.WaitGroup
	for i := range totals {
		wg.Go(func() { totals[i], errs[i] = stores[i%2].CountMessage(ctx, p) })
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, total := range totals {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if total < 1 || total > 2*each || seen[total] {
			t.Fatalf("total %d given twice or out of 1..%d", total, 2*each)
		}
		seen[total] = true
	}
	if n := c.n.Load(); n >= 2*each {
		t.Errorf("%d writes for %d messages counted at once", n, 2*each)
	}
	// Counted alone, the next is the 201st.
	if got, err := stores[0].CountMessage(ctx, p); err != nil || got != 2*each+1 {
		t.Fatalf("next count: %d %v", got, err)
	}
}
