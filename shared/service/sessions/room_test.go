package sessions_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestReserveOnlyWithRoomKnown: an early answer is admitted only for a
// connection and a key whose counts this registry learnt from the store,
// while the subscriptions they hold, with those being stored, stay within
// half of each limit; a refusal teaches that the connection is full; a
// closed connection is forgotten. The sessions in Postgres never answer
// early.
func TestReserveOnlyWithRoomKnown(t *testing.T) {
	ctx := context.Background()
	const community = "default"
	lim := sessions.Limits{PerConnection: 8, PerKey: 100}
	reg := sessions.NewRegistry(sessionstest.DynamoDB(t).Store)
	alice := testkit.NewKey(t)
	if _, err := reg.Open(ctx, sessions.Connection{ID: "conn", Community: community, Pubkey: alice.Pub, Challenge: "x"}); err != nil {
		t.Fatal(err)
	}
	put := func(sub string, res *sessions.Reservation) error {
		row, err := reg.Row(community, "conn", sub, alice.Pub, []nostr.Filter{{Kinds: []int{9}}})
		if err != nil {
			t.Fatal(err)
		}
		return reg.PutHeld(ctx, row, lim, res)
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, lim); ok {
		t.Fatal("admitted with no count known")
	}
	if err := put("s0", nil); err != nil {
		t.Fatal(err)
	}
	// Held 1: room for 3 more within half of 8.
	var held []*sessions.Reservation
	for i := range 3 {
		res, ok := reg.Reserve("conn", community, alice.Pub, lim)
		if !ok {
			t.Fatalf("reservation %d refused with 1 held", i)
		}
		held = append(held, res)
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, lim); ok {
		t.Fatal("admitted past half the connection's limit (1 held, 3 being stored)")
	}
	for i, res := range held {
		if err := put(fmt.Sprintf("s%d", i+1), res); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, lim); ok {
		t.Fatal("admitted with 4 of 8 held")
	}
	if err := reg.Unsubscribe(ctx, "conn", "s1"); err != nil {
		t.Fatal(err)
	}
	res, ok := reg.Reserve("conn", community, alice.Pub, lim)
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
	if _, ok := reg.Reserve("conn", community, alice.Pub, lim); ok {
		t.Fatal("admitted on a connection the store said is full")
	}
	if err := reg.Close(ctx, "conn"); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Reserve("conn", community, alice.Pub, lim); ok {
		t.Fatal("admitted on a closed connection")
	}

	pg := sessions.NewRegistry(sessions.NewPG(testkit.NewStore(t, store.Options{MaxConns: 2})))
	if _, ok := pg.Reserve("conn", community, alice.Pub, lim); ok {
		t.Fatal("the sessions in Postgres admitted an early answer")
	}
}
