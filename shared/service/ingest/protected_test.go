package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// NIP-70 in the pipeline every door calls (WebSocket EVENT and POST
// /events both reach Submit with the key that authenticated): a protected
// event is stored only when that key is its author; from another key (a
// gift wrap, the one kind another key may sign, included) or without one
// it is refused and leaves nothing.
func TestProtectedEventOnlyFromItsAuthor(t *testing.T) {
	h, owner, ch := newChannelHarness(t)
	other := testkit.NewKey(t)
	submitAs := func(authed string, ev *nostr.Event, want string) {
		t.Helper()
		before := h.counts()
		out, err := h.svc.Submit(context.Background(), community, authed, ev)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			if !out.Accepted {
				t.Fatalf("kind %d from its author: %q", ev.Kind, out.Message)
			}
			return
		}
		if out.Accepted || !strings.HasPrefix(out.Message, want) {
			t.Fatalf("kind %d as %.8q: got accepted=%v %q, want %q", ev.Kind, authed, out.Accepted, out.Message, want)
		}
		if h.counts() != before {
			t.Fatal("a refused protected event left a trace")
		}
	}
	msg := owner.Event(t, 9, "protected", nostr.Tag{"h", ch}, nostr.Tag{"-"})
	submitAs(other.Pub, msg, "restricted:")
	submitAs("", msg, "auth-required:")
	note := owner.Event(t, 1, "protected note", nostr.Tag{"-"})
	submitAs(other.Pub, note, "restricted:")
	wrap := other.Event(t, 1059, "sealed", nostr.Tag{"p", owner.Pub}, nostr.Tag{"-"})
	submitAs(owner.Pub, wrap, "restricted:")
	submitAs(owner.Pub, msg, "")
	submitAs(owner.Pub, note, "")
	// Unprotected, a gift wrap from another key is stored as before.
	submitAs(owner.Pub, other.Event(t, 1059, "sealed", nostr.Tag{"p", owner.Pub}), "")
}
