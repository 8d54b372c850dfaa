package query

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// NIP-40 on every read path: events the write path took while their
// expiration was ahead of its clock (t0+300) are served by no read once the
// clock of the reads (the database's, now) is past it, before any sweep:
// a plain REQ by id, kind and author, its COUNT, a NIP-50 search, the
// channel window and its COUNT, the aux closure (a reaction), the thread
// panel and the thread window (a reply), an expired thread root, and
// NIP-RS's read-state snapshot.
func TestExpiredEventAbsentFromEveryReadPath(t *testing.T) {
	e, alice, ch := newChannelEnv(t)
	exp := nostr.Tag{"expiration", strconv.FormatInt(t0+400, 10)}
	root := e.msg(alice, ch, t0+10, "root")
	gone := e.submit(alice, 9, t0+11, "quetzal expiring", nostr.Tag{"h", ch}, exp)
	reply := e.submit(alice, 9, t0+12, "reply", nostr.Tag{"h", ch}, nostr.Tag{"e", root.ID, "", "reply"}, exp)
	react := e.submit(alice, 7, t0+13, "+", nostr.Tag{"e", root.ID}, nostr.Tag{"p", alice.pk}, exp)
	goneRoot := e.submit(alice, 9, t0+14, "expiring root", nostr.Tag{"h", ch}, exp)
	liveReply := e.reply(alice, ch, goneRoot, t0+15, "reply to an expired root", false)
	expired := []*nostr.Event{gone, reply, react, goneRoot}
	none := func(path string, evs []*nostr.Event) {
		t.Helper()
		for _, x := range expired {
			if has(evs, x.ID) {
				t.Errorf("%s serves expired event %s (%q)", path, x.ID, x.Content)
			}
		}
	}
	idsJSON := fmt.Sprintf(`[%q,%q,%q,%q]`, gone.ID, reply.ID, react.ID, goneRoot.ID)
	none("REQ by ids", e.query(alice, `[{"ids":`+idsJSON+`}]`))
	none("REQ by author", e.query(alice, fmt.Sprintf(`[{"authors":[%q]}]`, alice.pk)))
	none("REQ by #h", e.query(alice, fmt.Sprintf(`[{"#h":[%q]}]`, ch)))
	none("REQ by #e", e.query(alice, fmt.Sprintf(`[{"#e":[%q]}]`, root.ID)))
	if n := e.count(alice, `[{"ids":`+idsJSON+`}]`); n != 0 {
		t.Errorf("COUNT by ids = %d, want 0", n)
	}
	if got := e.query(alice, `[{"kinds":[9],"search":"quetzal"}]`); len(got) != 0 {
		t.Errorf("search serves %d events, want none", len(got))
	}
	win := e.query(alice, windowBody(ch, `,"include_aux":true,"include_summaries":true`))
	none("window with aux and summaries", win)
	if !has(win, root.ID) {
		t.Fatal("the window lost its live row")
	}
	if n := e.count(alice, windowBody(ch, "")); n != 1 {
		t.Errorf("window COUNT = %d, want 1 (the live root only)", n)
	}
	none("thread panel", e.query(alice, fmt.Sprintf(`[{"#e":[%q],"depth_limit":10}]`, root.ID)))
	none("thread window", e.query(alice, fmt.Sprintf(`[{"thread_window":true,"#h":[%q],"#e":[%q],"kinds":[9],"depth_limit":3}]`, ch, root.ID)))
	// NIP-RS's read-state snapshot (the reader's own 30078s).
	state := e.submit(alice, 30078, t0+16, "{}", nostr.Tag{"d", "read-state"}, exp)
	snap := e.query(alice, `[{"kinds":[30078],"authors":["`+alice.pk+`"],"read_state_snapshot":1}]`)
	none("read-state snapshot", snap)
	if has(snap, state.ID) {
		t.Error("the read-state snapshot serves an expired read state")
	}
	// A thread whose root expired is one of an unknown root.
	if got := e.query(alice, fmt.Sprintf(`[{"thread_window":true,"#h":[%q],"#e":[%q],"kinds":[9],"depth_limit":3}]`, ch, goneRoot.ID)); has(got, liveReply.ID) || has(got, goneRoot.ID) {
		t.Error("the thread window of an expired root serves it or its replies")
	}
}
