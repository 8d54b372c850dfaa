package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// foldOf is a fold of one pending subscription of pubkey, on connection
// conn (stored with it).
func foldOf(conn, pubkey string, now int64) store.SessionFold {
	return store.SessionFold{Now: now, MaxSubs: 20,
		Connections: []store.Connection{{ID: conn, Community: "default", Challenge: "c", ChallengeSent: true,
			Pubkey: pubkey, RelayURLs: []string{"ws://x"}, ConnectedAt: now, ExpiresAt: now + 3600}},
		Subs: []store.NewSubscription{{
			Subscription: store.Subscription{Connection: conn, Sub: "live", Pubkey: pubkey, Filters: `[{"kinds":[9]}]`},
			Community:    "default", Pins: []string{""}, CreatedAt: now}}}
}

// subscribed counts pubkey's stored subscriptions.
func subscribed(t *testing.T, db *dbtest.DB, pubkey string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM ws_subscriptions WHERE pubkey = $1`, pubkey).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFoldAsksTheMembershipGate: a fold stores a pending subscription only
// when the NIP-43 gate admits its key at the insert (the REQ that left it
// never met the gate): the SQL twin of nip43.Admits, over every role, with
// enforcement on and off.
func TestFoldAsksTheMembershipGate(t *testing.T) {
	ctx := context.Background()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 2})
	now := time.Now().Unix()
	keys := map[string]string{}
	for _, role := range []string{nip43.Owner, nip43.Admin, nip43.Member, ""} {
		_, pk := keypair()
		keys[role] = pk
		switch role {
		case nip43.Owner:
			if err := st.AddCommunityOperator(ctx, "default", pk); err != nil {
				t.Fatal(err)
			}
		case nip43.Admin, nip43.Member:
			if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
				_, err := tx.AddRelayMember(ctx, pk, role, "op", now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, enforced := range []bool{false, true} {
		if err := st.SetMembershipEnforced(ctx, "default", enforced); err != nil {
			t.Fatal(err)
		}
		for role, pk := range keys {
			conn := fmt.Sprintf("%v-%s", enforced, role)
			if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
				tx.FoldSessions(foldOf(conn, pk, now))
				_, _, err := tx.RelayRole(ctx, pk) // sends BEGIN and the fold
				return err
			}); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM ws_subscriptions WHERE connection_id = $1`, conn).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := nip43.Admits(enforced, role); (n == 1) != want {
				t.Errorf("enforced %v, role %q: %d stored, want stored %v", enforced, role, n, want)
			}
		}
	}
}

// TestFoldNeverRestoresARemovedMember: a write that folds a pending
// subscription of a member and a removal of that member (9031, 28936)
// running at the same time leave no subscription of the removed key,
// whichever reaches the member's row first: a fold collected before the
// removal committed does not store it after, and a removal that waits for
// the fold's commit ends what it stored.
func TestFoldNeverRestoresARemovedMember(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 4})
	if err := st.SetMembershipEnforced(ctx, "default", true); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	add := func(pk string) {
		t.Helper()
		if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
			_, err := tx.AddRelayMember(ctx, pk, nip43.Member, "op", now)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	fold := func(conn, pk string) func(ctx context.Context, tx *store.Tx) error {
		return func(ctx context.Context, tx *store.Tx) error {
			tx.FoldSessions(foldOf(conn, pk, now))
			_, _, err := tx.RelayRole(ctx, "someone") // sends BEGIN and the fold
			return err
		}
	}
	remove := func(pk string) func(ctx context.Context, tx *store.Tx) error {
		return func(ctx context.Context, tx *store.Tx) error {
			removed, err := tx.RemoveRelayMember(ctx, pk, "")
			if err == nil && !removed {
				err = fmt.Errorf("%s was no member", pk)
			}
			return err
		}
	}
	for _, c := range []struct{ name, first string }{{"fold first", "fold"}, {"removal first", "removal"}} {
		t.Run(c.name, func(t *testing.T) {
			_, pk := keypair()
			add(pk)
			steps := map[string]func(context.Context, *store.Tx) error{"fold": fold("conn-"+pk[:8], pk), "removal": remove(pk)}
			second := "removal"
			if c.first == "removal" {
				second = "fold"
			}
			// The first holds its transaction open after its statement
			// until the second has run into the member's row (or, without
			// a lock to meet, finished).
			ran, release, firstDone, secondDone := make(chan struct{}), make(chan struct{}), make(chan error, 1), make(chan error, 1)
			go func() {
				firstDone <- st.Tx(ctx, "default", func(tx *store.Tx) error {
					err := steps[c.first](ctx, tx)
					close(ran)
					<-release
					return err
				})
			}()
			<-ran
			go func() {
				secondDone <- st.Tx(ctx, "default", func(tx *store.Tx) error { return steps[second](ctx, tx) })
			}()
			waiting := func() bool {
				var n int
				if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n > 0
			}
			var secondErr error
			finished := false
			for !finished && !waiting() {
				select {
				case secondErr = <-secondDone:
					finished = true
				case <-time.After(5 * time.Millisecond):
				}
			}
			close(release)
			if err := <-firstDone; err != nil {
				t.Fatal(err)
			}
			if !finished {
				secondErr = <-secondDone
			}
			if secondErr != nil {
				t.Fatal(secondErr)
			}
			if n := subscribed(t, db, pk); n != 0 {
				t.Fatalf("the removed key keeps %d subscription(s)", n)
			}
		})
	}
}

// TestFoldTwiceStoresOnce: a fold applied again (a write that failed after
// its fold committed elsewhere, or whose objects were not deleted) stores
// the same rows once: its statements are upserts.
func TestFoldTwiceStoresOnce(t *testing.T) {
	ctx := context.Background()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 2})
	_, pk := keypair()
	now := time.Now().Unix()
	for range 2 {
		if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
			tx.FoldSessions(foldOf("conn", pk, now))
			_, _, err := tx.RelayRole(ctx, pk) // sends BEGIN and the fold
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n := subscribed(t, db, pk); n != 1 {
		t.Fatalf("%d subscriptions after folding twice, want 1", n)
	}
}
