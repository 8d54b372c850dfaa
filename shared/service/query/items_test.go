package query

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/postgres/store"
)

// TestItemsAreWhatAReqWouldServe: a NIP-77 item set is the events a REQ of
// the same filter serves the reader (limit ignored), in (created_at, id)
// order, at most max; a non-member of a private channel gets none, and a
// deleted event is absent.
func TestItemsAreWhatAReqWouldServe(t *testing.T) {
	e := newEnv(t)
	owner, outsider := newUser(), newUser()
	ch := e.channel(owner, nostr.Tag{"visibility", "private"}, nostr.Tag{"private"})
	var want []store.Item
	for i := range 6 {
		ev := e.msg(owner, ch, t0+10+int64(i/2), fmt.Sprintf("m%d", i))
		want = append(want, store.Item{CreatedAt: int64(ev.CreatedAt), ID: ev.ID})
	}
	gone := e.msg(owner, ch, t0+20, "gone")
	e.del(owner, gone, t0+21)
	f := []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {ch}}, Limit: 1}}
	slices.SortFunc(want, func(a, b store.Item) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})

	got, err := e.q.Items(e.ctx, "default", owner.pk, f, 100)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("member's items %v (%v), want %v", got, err, want)
	}
	if got, err := e.q.Items(e.ctx, "default", owner.pk, f, 4); err != nil || !slices.Equal(got, want[:4]) {
		t.Fatalf("items with max 4: %v (%v), want the oldest 4", got, err)
	}
	if got, err := e.q.Items(e.ctx, "default", outsider.pk, f, 100); err != nil || len(got) != 0 {
		t.Fatalf("non-member's items %v (%v), want none", got, err)
	}
	if _, err := e.q.Items(e.ctx, "default", owner.pk, []nostr.Filter{{Kinds: []int{-1}}}, 100); err == nil {
		t.Fatal("a filter a REQ refuses was read")
	}
}
