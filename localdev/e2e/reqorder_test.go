package e2e

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestReqStoredEventsInOrder: a WebSocket REQ gets the newest limit of
// its stored events (created_at descending; ties by id, as the read engine
// orders), each once, and EOSE after the last of them. They are posted
// concurrently (wsrelay's sendAll, docs/compatibility.md), so they may
// arrive in another order: the client sorts them.
func TestReqStoredEventsInOrder(t *testing.T) {
	r := newRelay(t)
	alice := testkit.NewKey(t)
	ra := dial(t, r)
	login(t, ra, alice)
	ch := createChannel(t, ra, alice, "open")
	base := nostr.Now() - 100
	var published []nostr.Event
	// Out of order on purpose, with two events sharing a second.
	for i, off := range []int{3, 9, 1, 7, 7, 0, 5, 2, 8, 4, 6} {
		ev := nostr.Event{Kind: 9, CreatedAt: base + nostr.Timestamp(off), Tags: nostr.Tags{{"h", ch}}, Content: "n" + string(rune('a'+i))}
		if err := ev.Sign(alice.Secret); err != nil {
			t.Fatal(err)
		}
		if err := ra.Publish(ctxT(t), ev); err != nil {
			t.Fatal(err)
		}
		published = append(published, ev)
	}
	const limit = 6
	rc := authedRaw(t, r, testkit.NewKey(t))
	rc.sendJSON([]any{"REQ", "ordered", map[string]any{"kinds": []int{9}, "#h": []string{ch}, "limit": limit}})
	var got []nostr.Event
	for {
		msg := rc.read()
		verb := str(t, msg[0])
		if verb == "EOSE" {
			if str(t, msg[1]) != "ordered" {
				t.Fatalf("EOSE for %s", joinRaw(msg))
			}
			break
		}
		if verb != "EVENT" {
			t.Fatalf("before EOSE: %s", joinRaw(msg))
		}
		_, ev := rc.eventOf(msg)
		got = append(got, ev)
	}
	if len(got) != limit {
		t.Fatalf("%d stored events, want %d", len(got), limit)
	}
	// The newest limit, in the engine's order once sorted; equal
	// created_at by id, ascending.
	want := append([]nostr.Event(nil), published...)
	sortNewestFirst(want)
	sortNewestFirst(got)
	for i := range got {
		if got[i].ID != want[i].ID {
			t.Fatalf("event %d is %s (created_at %d), want %s (created_at %d)", i, got[i].Content, got[i].CreatedAt, want[i].Content, want[i].CreatedAt)
		}
	}
}

// eventOf decodes the event of an EVENT message.
func (rc *rawConn) eventOf(msg []json.RawMessage) (string, nostr.Event) {
	rc.t.Helper()
	var ev nostr.Event
	if err := json.Unmarshal(msg[2], &ev); err != nil {
		rc.t.Fatal(err)
	}
	return str(rc.t, msg[1]), ev
}

// sortNewestFirst is the read engine's order: created_at descending, then
// id ascending.
func sortNewestFirst(evs []nostr.Event) {
	slices.SortFunc(evs, func(a, b nostr.Event) int {
		if a.CreatedAt != b.CreatedAt {
			return cmp.Compare(b.CreatedAt, a.CreatedAt)
		}
		return strings.Compare(a.ID, b.ID)
	})
}
