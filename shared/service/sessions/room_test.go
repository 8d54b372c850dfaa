package sessions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const community = "default"

var roomLimits = session.Limits{PerConnection: 8, PerKey: 100}

// roomRegistry is a registry over the sessions in DynamoDB with one
// connection, "conn", of alice's in community.
func roomRegistry(t *testing.T) (context.Context, *sessions.Registry, testkit.Key) {
	t.Helper()
	ctx := context.Background()
	reg := sessions.NewRegistry(sessionstest.DynamoDB(t).Store)
	alice := testkit.NewKey(t)
	if _, err := reg.Open(ctx, session.Connection{ID: "conn", Community: community, Pubkey: alice.Pub, Challenge: "x"}); err != nil {
		t.Fatal(err)
	}
	return ctx, reg, alice
}

// putRow stores alice's subscription sub of "conn" (kind 9) through reg,
// with res its reservation (nil: none).
func putRow(t *testing.T, reg *sessions.Registry, alice testkit.Key, sub string, res *sessions.Reservation) error {
	t.Helper()
	row, err := reg.Row(community, "conn", sub, alice.Pub, []nostr.Filter{{Kinds: []int{9}}})
	if err != nil {
		t.Fatal(err)
	}
	return reg.PutHeld(context.Background(), row, roomLimits, res)
}

// TestReserveOnlyWithRoomKnown: an early answer is admitted only for a
// connection and a key whose counts this registry learnt from the store,
// while the subscriptions they hold, with those being stored, stay within
// half of each limit; a refusal teaches that the connection is full; a
// closed connection is forgotten.
func TestReserveOnlyWithRoomKnown(t *testing.T) {
	ctx, reg, alice := roomRegistry(t)
	put := func(sub string, res *sessions.Reservation) error { return putRow(t, reg, alice, sub, res) }
	if _, ok := reg.Reserve("conn", community, alice.Pub, "q", roomLimits); ok {
		t.Fatal("admitted with no count known")
	}
	if err := put("s0", nil); err != nil {
		t.Fatal(err)
	}
	// Held 1: room for 3 more within half of 8.
	var held []*sessions.Reservation
	for i := range 3 {
		res, ok := reg.Reserve("conn", community, alice.Pub, fmt.Sprintf("s%d", i+1), roomLimits)
		if !ok {
			t.Fatalf("reservation %d refused with 1 held", i)
		}
		held = append(held, res)
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, "q", roomLimits); ok {
		t.Fatal("admitted past half the connection's limit (1 held, 3 being stored)")
	}
	for i, res := range held {
		if err := put(fmt.Sprintf("s%d", i+1), res); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, "q", roomLimits); ok {
		t.Fatal("admitted with 4 of 8 held")
	}
	if err := reg.Unsubscribe(ctx, "conn", "s1"); err != nil {
		t.Fatal(err)
	}
	res, ok := reg.Reserve("conn", community, alice.Pub, "s9", roomLimits)
	if !ok {
		t.Fatal("refused with 3 of 8 held after a CLOSE")
	}
	if err := put("s9", res); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 14; i++ {
		if err := put(fmt.Sprintf("s%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := put("s99", nil); err == nil {
		t.Fatal("a subscription past the limit was stored")
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, "q", roomLimits); ok {
		t.Fatal("admitted on a connection the store said is full")
	}
	if err := reg.Close(ctx, "conn"); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, "q", roomLimits); ok {
		t.Fatal("admitted on a closed connection")
	}
}

// TestReservationHandedBackOnClose: an early answer's place is free again
// as soon as its id is closed here (a one-shot read's CLOSE), before its
// REQ hands it back, and is handed back once; a REQ that reuses a pending
// id takes that id's place rather than a second one.
func TestReservationHandedBackOnClose(t *testing.T) {
	ctx, reg, alice := roomRegistry(t)
	if err := putRow(t, reg, alice, "s0", nil); err != nil { // held 1: room for 3 within half of 8
		t.Fatal(err)
	}
	reserve := func(sub string) *sessions.Reservation {
		t.Helper()
		res, ok := reg.Reserve("conn", community, alice.Pub, sub, roomLimits)
		if !ok {
			t.Fatalf("reservation of %s refused", sub)
		}
		return res
	}
	a, _, _ := reserve("a"), reserve("b"), reserve("b") // b twice: one place
	reserve("c")
	if _, ok := reg.Reserve("conn", community, alice.Pub, "d", roomLimits); ok {
		t.Fatal("admitted past half the connection's limit")
	}
	if err := reg.CloseSub(ctx, "conn", "a"); err != nil {
		t.Fatal(err)
	}
	reg.Release(a) // its REQ hands it back too: no second place freed
	reserve("d")
	if _, ok := reg.Reserve("conn", community, alice.Pub, "e", roomLimits); ok {
		t.Fatal("a place was freed twice")
	}
}

// TestReservationKnowsAReplacedId: a reservation tells whether its id
// names a subscription the connection holds, as the store last reported
// to this registry, until the id is closed here.
func TestReservationKnowsAReplacedId(t *testing.T) {
	ctx, reg, alice := roomRegistry(t)
	if err := putRow(t, reg, alice, "held", nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sub  string
		want bool
	}{{"held", true}, {"new", false}} {
		res, ok := reg.Reserve("conn", community, alice.Pub, c.sub, roomLimits)
		if !ok {
			t.Fatalf("reservation of %s refused", c.sub)
		}
		if res.Replaces() != c.want {
			t.Errorf("reservation of %s: replaces %v, want %v", c.sub, res.Replaces(), c.want)
		}
		reg.Release(res)
	}
	if err := reg.CloseSub(ctx, "conn", "held"); err != nil {
		t.Fatal(err)
	}
	res, ok := reg.Reserve("conn", community, alice.Pub, "held", roomLimits)
	if !ok || res.Replaces() {
		t.Fatalf("after its CLOSE: reserved %v, replaces %v, want a new id", ok, res.Replaces())
	}
}

// TestAnsweredNotYetStoredCount: early answers answered EOSE and not yet
// stored are stored before a REQ that came after them, once that REQ
// could meet a limit (the store counts only what landed): with a limit of
// 8, 1 held and 3 answered, 4 more are stored and the next is refused,
// whenever the 3 land; for the key's limit, the later REQs come on
// another connection of the key.
func TestAnsweredNotYetStoredCount(t *testing.T) {
	for _, c := range []struct {
		name  string
		lim   session.Limits
		conn  string // the later REQs'
		limit func(sub string) error
	}{
		{"connection", session.Limits{PerConnection: 8, PerKey: 100}, "conn", func(sub string) error { return sessions.Full(8, sub) }},
		{"key", session.Limits{PerConnection: 100, PerKey: 8}, "conn2", func(sub string) error { return sessions.KeyFull(8, sub) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, reg, alice := roomRegistry(t)
			if _, err := reg.Open(ctx, session.Connection{ID: "conn2", Community: community, Pubkey: alice.Pub, Challenge: "y"}); err != nil {
				t.Fatal(err)
			}
			put := func(conn, sub string, res *sessions.Reservation) error {
				row, err := reg.Row(community, conn, sub, alice.Pub, []nostr.Filter{{Kinds: []int{9}}})
				if err != nil {
					return err
				}
				return reg.PutHeld(ctx, row, c.lim, res)
			}
			if err := put("conn", "s0", nil); err != nil {
				t.Fatal(err)
			}
			var pending []*sessions.Reservation
			for i := range 3 {
				res, ok := reg.Reserve("conn", community, alice.Pub, fmt.Sprintf("e%d", i), c.lim)
				if !ok {
					t.Fatalf("reservation %d refused", i)
				}
				pending = append(pending, res)
			}
			landed := make(chan error, len(pending))
			go func() {
				time.Sleep(100 * time.Millisecond) // the early answers' grace
				for i, res := range pending {
					landed <- put("conn", fmt.Sprintf("e%d", i), res)
				}
			}()
			for i := 1; i <= 4; i++ {
				if err := put(c.conn, fmt.Sprintf("s%d", i), nil); err != nil {
					t.Fatalf("s%d with %d held and 3 answered: %v", i, i, err)
				}
			}
			if err := put(c.conn, "s5", nil); err == nil || err.Error() != c.limit("s5").Error() {
				t.Fatalf("the ninth subscription (5 stored, 3 answered): %v, want %v", err, c.limit("s5"))
			}
			for i := range pending {
				if err := <-landed; err != nil {
					t.Fatalf("answered e%d: %v", i, err)
				}
			}
		})
	}
}
