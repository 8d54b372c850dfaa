package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestLateFoldRidesTheCommit (issue 36): sessions folded again after the
// transaction began (a write whose relay-signed events ran past its
// preparation) ride its commit, before COMMIT: the commit's delivery finds
// them; what the transaction folded already is not sent again, unless it
// was replaced since (the same subscription id REQ'd again); and a
// subscription of a key whose subscriptions the transaction ended
// (RemoveRelayMember) is not folded back.
func TestLateFoldRidesTheCommit(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	const community = "default"
	channel := testkit.ChannelID()
	now := time.Now().Unix()
	_, member := keypair()
	_, removed := keypair()
	if err := st.Tx(ctx, community, func(tx *store.Tx) error {
		_, err := tx.AddRelayMember(ctx, removed, "member", member, now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	conn := func(id, pubkey string) store.Connection {
		return store.Connection{ID: id, Community: community, Challenge: "c", ChallengeSent: true, Pubkey: pubkey,
			ConnectedAt: now, ExpiresAt: now + 3600}
	}
	sub := func(connID, id, pubkey string) store.NewSubscription {
		return store.NewSubscription{Subscription: store.Subscription{Connection: connID, Sub: id, Pubkey: pubkey,
			Filters: `[{"kinds":[9]}]`}, Community: community, Pins: []string{channel}, CreatedAt: now}
	}
	first := store.SessionFold{Now: now, MaxSubs: 10,
		Connections: []store.Connection{conn("a", member)}, Subs: []store.NewSubscription{sub("a", "s1", member)}}
	replaced := sub("a", "s0", member)
	first.Subs = append(first.Subs, replaced)
	replaced.Filters = `[{"kinds":[9],"limit":1}]` // the same id REQ'd again between the lists
	late := store.SessionFold{Now: now, MaxSubs: 10,
		Connections: []store.Connection{conn("a", member), conn("b", member), conn("c", removed)},
		Subs: []store.NewSubscription{sub("a", "s1", member), replaced, sub("b", "s2", member),
			sub("c", "s3", removed)}}
	sk, _ := keypair()
	ev := &nostr.Event{Kind: 9, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", channel}}, Content: "hi"}
	if err := ev.Sign(sk); err != nil {
		t.Fatal(err)
	}
	var d *store.Delivery
	var sent int64
	if err := st.Tx(ctx, community, func(tx *store.Tx) error {
		tx.FoldSessions(first)
		d = tx.DeliveryAtCommit(func() store.DeliveryRequest { return store.DeliveryRequest{IDs: []string{ev.ID}, Now: now} })
		if _, err := tx.InsertEvent(ctx, ev, store.EventMeta{ChannelID: channel, TopLevel: true}); err != nil {
			return err
		}
		if ok, err := tx.RemoveRelayMember(ctx, removed, ""); err != nil || !ok {
			t.Fatalf("remove relay member: %v %v", ok, err)
		}
		sent = st.Statements()
		tx.FoldSessions(late)
		if st.Statements() != sent {
			t.Fatal("a late fold sent a statement of its own before the commit")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var stored []string
	if err := store.PoolOf(st).QueryRow(ctx, `SELECT coalesce(array_agg(connection_id || '/' || sub_id ORDER BY connection_id, sub_id), '{}') FROM ws_subscriptions`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored, []string{"a/s0", "a/s1", "b/s2"}) {
		t.Fatalf("stored subscriptions %v, want a/s0, a/s1 and b/s2", stored)
	}
	var filters string
	if err := store.PoolOf(st).QueryRow(ctx, `SELECT filters FROM ws_subscriptions WHERE sub_id = 's0'`).Scan(&filters); err != nil {
		t.Fatal(err)
	}
	if filters != replaced.Filters {
		t.Fatalf("subscription s0 stored with %s, want its replacement %s", filters, replaced.Filters)
	}
	if !store.LoadedByCommit(d) {
		t.Fatal("the delivery did not ride the commit")
	}
	got, err := d.Deliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var subs []string
	for _, s := range got.Subscriptions {
		subs = append(subs, s.Connection+"/"+s.Sub)
	}
	slices.Sort(subs)
	if !slices.Equal(subs, []string{"a/s0", "a/s1", "b/s2"}) {
		t.Fatalf("the commit's audience %v, want a/s0, a/s1 and b/s2 (not the removed key's c/s3)", subs)
	}
}
