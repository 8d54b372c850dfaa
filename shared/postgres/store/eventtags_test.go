package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestEventTagsIndexWhatReadsUse: a stored event gets an event_tags row for
// each single-letter tag a filter reads there, and none for h (reads match
// #h through the stored channel) or for a value too long to index.
func TestEventTagsIndexWhatReadsUse(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	channel := testkit.ChannelID()
	sk, _ := keypair()
	ev := &nostr.Event{Kind: 9, CreatedAt: nostr.Now(), Content: "hi", Tags: nostr.Tags{
		{"h", channel}, {"e", strings.Repeat("a", 64)}, {"p", strings.Repeat("b", 64)},
		{"t", strings.Repeat("x", 513)}, {"client", "buzz"},
	}}
	if err := ev.Sign(sk); err != nil {
		t.Fatal(err)
	}
	if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
		_, err := tx.EventsInsert(ctx, ev, records.EventMeta{ChannelID: channel, TopLevel: true, Last: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var names string
	if err := store.PoolOf(st).QueryRow(ctx, `SELECT string_agg(name, ',' ORDER BY name) FROM event_tags WHERE event_id = $1`, ev.ID).Scan(&names); err != nil {
		t.Fatal(err)
	}
	if names != "e,p" {
		t.Fatalf("event_tags rows for tags %q, want e,p", names)
	}
}
