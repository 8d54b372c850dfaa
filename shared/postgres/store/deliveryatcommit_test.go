package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestDeliveryRidesTheCommit: what live delivery needs is read in the
// commit's round trip, after COMMIT (whether the last insert or a plain
// COMMIT ends the transaction): the committed event as stored. A
// transaction that wrote nothing has no
// commit to carry it, and its delivery is loaded on its own.
func TestDeliveryRidesTheCommit(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	const community = "default"
	channel := testkit.ChannelID()
	sk, _ := keypair()
	check := func(t *testing.T, d *store.Delivery, id string, byCommit bool) {
		t.Helper()
		if got := store.LoadedByCommit(d); got != byCommit {
			t.Fatalf("loaded by the commit: %v, want %v", got, byCommit)
		}
		got, err := d.Deliveries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := got.Events[id]; !ok || e.Channel != channel || e.Raw == "" {
			t.Fatalf("event %s for delivery: %+v (found %v), want it stored in channel %s", id, e, ok, channel)
		}
	}
	for _, last := range []bool{true, false} {
		ev := &nostr.Event{Kind: 9, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", channel}}, Content: "hi"}
		if err := ev.Sign(sk); err != nil {
			t.Fatal(err)
		}
		var d *store.Delivery
		if err := st.Tx(ctx, community, func(tx *store.Tx) error {
			d = tx.DeliveriesGetAtCommit(func() store.DeliveryRequest {
				return store.DeliveryRequest{IDs: []string{ev.ID}}
			})
			_, err := tx.EventsInsert(ctx, ev, records.EventMeta{ChannelID: channel, TopLevel: true, Last: last})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		check(t, d, ev.ID, true)

		var idle *store.Delivery
		if err := st.Tx(ctx, community, func(tx *store.Tx) error {
			idle = tx.DeliveriesGetAtCommit(func() store.DeliveryRequest {
				return store.DeliveryRequest{IDs: []string{ev.ID}}
			})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		check(t, idle, ev.ID, false)
	}
}

// TestDeliverySystemFlag: a system channel's events are delivered as a
// system channel's, whether the transaction read the channel (its flag is
// then taken from that read) or not (it is read with the subscriptions).
func TestDeliverySystemFlag(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	const community = "default"
	channel := testkit.ChannelID()
	sk, pk := keypair()
	if err := st.Tx(ctx, community, func(tx *store.Tx) error {
		_, err := tx.ChannelsInsert(ctx, &nip29.Channel{ID: channel, Name: "sys", Type: "system", Visibility: "open",
			Labels: []string{}, Creator: pk, CreatedAt: 1}, "")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, read := range []bool{true, false} {
		ev := &nostr.Event{Kind: 9, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", channel}}, Content: fmt.Sprint(read)}
		if err := ev.Sign(sk); err != nil {
			t.Fatal(err)
		}
		var d *store.Delivery
		if err := st.Tx(ctx, community, func(tx *store.Tx) error {
			d = tx.DeliveriesGetAtCommit(func() store.DeliveryRequest { return store.DeliveryRequest{IDs: []string{ev.ID}} })
			if read {
				if _, _, err := tx.ChannelsGetWithRole(ctx, channel, pk); err != nil {
					return err
				}
			}
			_, err := tx.EventsInsert(ctx, ev, records.EventMeta{ChannelID: channel, TopLevel: true, Last: true})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		got, err := d.Deliveries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e := got.Events[ev.ID]; !e.System || !got.System[channel] {
			t.Fatalf("channel read in the transaction %v: delivered %+v, system flags %v; want a system channel's event", read, e, got.System)
		}
	}
}
