package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
)

// NIP-RS read_state_snapshot takes one exact filter (Buzz's
// read_state_snapshot.rs scenarios): anything added, missing or changed is
// a 400, never a partial or ordinary answer.
func TestReadStateSnapshotExactFilter(t *testing.T) {
	const me = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	const other = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	exact := `{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":1}`
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"exact", "[" + exact + "]", true},
		{"exact, other key order and spaces", `[{ "read_state_snapshot" : 1, "authors":["` + me + `"], "kinds":[30078]}]`, true},
		{"since added", `[{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":1,"since":0}]`, false},
		{"limit added", `[{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":1,"limit":1}]`, false},
		{"#t added", `[{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":1,"#t":["read-state"]}]`, false},
		{"version 2", `[{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":2}]`, false},
		{"version false", `[{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":false}]`, false},
		{"version null", `[{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":null}]`, false},
		{"version 1.0", `[{"kinds":[30078],"authors":["` + me + `"],"read_state_snapshot":1.0}]`, false},
		{"another author", `[{"kinds":[30078],"authors":["` + other + `"],"read_state_snapshot":1}]`, false},
		{"two authors", `[{"kinds":[30078],"authors":["` + me + `","` + other + `"],"read_state_snapshot":1}]`, false},
		{"another kind", `[{"kinds":[30078,0],"authors":["` + me + `"],"read_state_snapshot":1}]`, false},
		{"no kinds", `[{"authors":["` + me + `"],"read_state_snapshot":1}]`, false},
		{"mixed with an ordinary filter", "[" + exact + `,{"kinds":[0]}]`, false},
		{"twice", "[" + exact + "," + exact + "]", false},
	} {
		err := exactSnapshotFilter([]byte(c.body), me)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
		if err != nil && reject.Map(err).Status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", c.name, reject.Map(err).Status)
		}
		if !WantsReadStateSnapshot([]byte(c.body)) {
			t.Errorf("%s: not recognised as a snapshot request", c.name)
		}
	}
	if WantsReadStateSnapshot([]byte(`[{"kinds":[30078],"authors":["` + me + `"]}]`)) {
		t.Error("an ordinary 30078 filter is taken for a snapshot request")
	}
}

// The snapshot holds every one of the reader's own 30078 events, complete,
// in one database snapshot; nobody else's, no other kind, not the replaced
// or deleted ones.
func TestReadStateSnapshot(t *testing.T) {
	e := newEnv(t)
	alice, bob := newUser(), newUser()
	body := func(u user) []byte {
		return []byte(`[{"kinds":[30078],"authors":["` + u.pk + `"],"read_state_snapshot":1}]`)
	}
	e.submit(alice, 30078, t0, "c1", nostr.Tag{"d", "read-state:" + strings.Repeat("1", 32)}, nostr.Tag{"t", "read-state"})
	a2 := e.submit(alice, 30078, t0+1, "c2", nostr.Tag{"d", "other-app"})
	a1v2 := e.submit(alice, 30078, t0+2, "c1 v2", nostr.Tag{"d", "read-state:" + strings.Repeat("1", 32)}, nostr.Tag{"t", "read-state"})
	gone := e.submit(alice, 30078, t0+3, "gone", nostr.Tag{"d", "gone"})
	e.submit(alice, 5, t0+4, "", nostr.Tag{"e", gone.ID})
	e.submit(alice, 0, t0, "{}")
	e.submit(bob, 30078, t0, "bob's", nostr.Tag{"d", "x"})

	snap, err := e.q.ReadStateSnapshot(e.ctx, "default", alice.pk, body(alice))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, raw := range snap.Events {
		var ev nostr.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	if want := []string{a1v2.ID, a2.ID}; !slices.Equal(ids, want) {
		t.Errorf("snapshot events %v, want %v (newest first, no replaced, deleted or foreign one)", ids, want)
	}
	if !snap.Complete || snap.Version != 1 || snap.Pubkey != alice.pk || snap.Community != "default" || len(snap.SnapshotID) != 64 {
		t.Errorf("snapshot envelope %+v", snap)
	}
	b, _ := json.Marshal(snap)
	for _, field := range []string{`"read_state_snapshot":1`, `"complete":true`, `"community_id":"default"`, `"snapshot_id":`, `"events":[`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("snapshot JSON %s lacks %s", b, field)
		}
	}
	if _, err := e.q.ReadStateSnapshot(e.ctx, "default", alice.pk, body(bob)); reject.Map(err).Status != http.StatusBadRequest {
		t.Errorf("another key's snapshot: %v, want 400", err)
	}
	if snap, err := e.q.ReadStateSnapshot(e.ctx, "default", bob.pk, body(bob)); err != nil || len(snap.Events) != 1 {
		t.Errorf("bob's snapshot: %v %v", snap, err)
	}
}

// Up to relayinfo.ReadStateSnapshotMaxEvents events the snapshot is whole;
// one more, or more stored bytes than ReadStateSnapshotMaxBytes, is a 413
// with nothing listed.
func TestReadStateSnapshotCap(t *testing.T) {
	e := newEnv(t)
	carol, dave := newUser(), newUser()
	load := func(u user, n int, content string) {
		evs := make([]dbtest.BulkEvent, n)
		for i := range evs {
			ev := nostr.Event{Kind: 30078, PubKey: u.pk, CreatedAt: nostr.Timestamp(t0), Tags: nostr.Tags{{"d", fmt.Sprint("slot-", i)}}, Content: content}
			ev.ID = ev.GetID()
			raw, _ := json.Marshal(ev)
			evs[i] = dbtest.BulkEvent{ID: ev.ID, Pubkey: u.pk, CreatedAt: t0, Kind: 30078, TopLevel: true, Raw: string(raw)}
		}
		if err := e.db.BulkEvents(e.ctx, "default", "", evs); err != nil {
			t.Fatal(err)
		}
	}
	body := func(u user) []byte {
		return []byte(`[{"kinds":[30078],"authors":["` + u.pk + `"],"read_state_snapshot":1}]`)
	}
	load(carol, relayinfo.ReadStateSnapshotMaxEvents, "x")
	snap, err := e.q.ReadStateSnapshot(e.ctx, "default", carol.pk, body(carol))
	if err != nil || len(snap.Events) != relayinfo.ReadStateSnapshotMaxEvents {
		t.Fatalf("at the cap: %v events, %v", len(snap.Events), err)
	}
	load(carol, 1, "one more")
	_, err = e.q.ReadStateSnapshot(e.ctx, "default", carol.pk, body(carol))
	var r *reject.Error
	if !errors.As(err, &r) || reject.Map(err).Status != http.StatusRequestEntityTooLarge || !strings.HasPrefix(r.Error(), "invalid:") {
		t.Errorf("above the cap: %v (status %d), want 413 invalid:", err, reject.Map(err).Status)
	}
	load(dave, 2, strings.Repeat("y", relayinfo.ReadStateSnapshotMaxBytes/2))
	if _, err := e.q.ReadStateSnapshot(e.ctx, "default", dave.pk, body(dave)); reject.Map(err).Status != http.StatusRequestEntityTooLarge {
		t.Errorf("over the byte cap: %v, want 413", err)
	}
}
