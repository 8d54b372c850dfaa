package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// page is one window response as NIP-CW reads it.
type page struct {
	rows    []string
	hasMore bool
	next    *cursorJSON
	replies *bool // thread_replies_in_channel echoed; nil when absent
	bounds  int
}

func (e *env) windowPage(reader user, ch string, limit int, at *cursorJSON) page {
	e.t.Helper()
	body := fmt.Sprintf(`[{"#h":[%q],"kinds":[9],"limit":%d,"top_level":true}]`, ch, limit)
	if at != nil {
		body = fmt.Sprintf(`[{"#h":[%q],"kinds":[9],"limit":%d,"top_level":true,"until":%d,"before_id":%q}]`, ch, limit, at.CreatedAt, at.ID)
	}
	var p page
	for _, ev := range e.query(reader, body) {
		switch ev.Kind {
		case 9:
			p.rows = append(p.rows, ev.ID)
		case kinds.WindowBounds:
			p.bounds++
			var c struct {
				HasMore bool        `json:"has_more"`
				Next    *cursorJSON `json:"next_cursor"`
				Replies *bool       `json:"thread_replies_in_channel"`
			}
			if err := json.Unmarshal([]byte(ev.Content), &c); err != nil {
				e.t.Fatal(err)
			}
			p.hasMore, p.next, p.replies = c.HasMore, c.Next, c.Replies
		}
	}
	return p
}

func (e *env) rowMode(on bool) {
	e.t.Helper()
	if err := e.st.CommunitiesSetThreadRepliesInChannel(e.ctx, "default", on); err != nil {
		e.t.Fatal(err)
	}
}

// NIP-CW §Community Row Mode and §Relay Processing, statement by statement:
// the mode is the community's, applied before the limit and the probe; the
// cursor is the scan position; every served 39006 echoes the mode; a page
// under one mode does not continue a chain of the other.
func TestThreadRepliesInChannel(t *testing.T) {
	e, owner, ch := newChannelEnv(t)
	m1 := e.msg(owner, ch, t0+10, "m1")
	r1 := e.reply(owner, ch, m1, t0+20, "r1", false)
	m2 := e.msg(owner, ch, t0+30, "m2")
	r2 := e.reply(owner, ch, r1, t0+40, "r2 (depth 2)", false)
	b := e.reply(owner, ch, m2, t0+50, "b (broadcast)", true)

	// Default mode (false): top-level rows only; the replies below the
	// rows are not counted by the probe.
	p := e.windowPage(owner, ch, 3, nil)
	if want := []string{b.ID, m2.ID, m1.ID}; !slices.Equal(p.rows, want) || p.hasMore || p.next != nil {
		t.Errorf("default mode, limit 3: rows %v has_more %v, want %v and no more", p.rows, p.hasMore, want)
	}
	if p.bounds != 1 || p.replies == nil || *p.replies {
		t.Errorf("default mode: 39006 echoes thread_replies_in_channel %v (%d bounds), want false", p.replies, p.bounds)
	}

	// Projection mode (true): every reply is a peer row at its own
	// position, the broadcast reply once.
	e.rowMode(true)
	all := []string{b.ID, r2.ID, m2.ID, r1.ID, m1.ID}
	p = e.windowPage(owner, ch, 10, nil)
	if !slices.Equal(p.rows, all) || p.hasMore || p.replies == nil || !*p.replies {
		t.Errorf("projection mode: rows %v has_more %v mode %v, want %v, no more, true", p.rows, p.hasMore, p.replies, all)
	}
	// Paged two at a time: the probe runs after the predicates, the next
	// cursor is the last retained row, the last page says no more.
	var got []string
	var at *cursorJSON
	for pages := 0; ; pages++ {
		p = e.windowPage(owner, ch, 2, at)
		got = append(got, p.rows...)
		if p.hasMore != (p.next != nil) || p.replies == nil || !*p.replies {
			t.Fatalf("page %d: has_more %v next %v mode %v", pages, p.hasMore, p.next, p.replies)
		}
		if !p.hasMore {
			break
		}
		if last := p.rows[len(p.rows)-1]; p.next.ID != last {
			t.Fatalf("page %d: next_cursor %s is not the scan position %s", pages, p.next.ID, last)
		}
		at = p.next
	}
	if !slices.Equal(got, all) {
		t.Errorf("projection pages: %v, want %v", got, all)
	}

	// A mode change: the same cursor under the other mode answers that
	// mode's rows and says so, so a client sees the change and refetches.
	first := e.windowPage(owner, ch, 2, nil) // b, r2 under true
	e.rowMode(false)
	p = e.windowPage(owner, ch, 2, first.next)
	if p.replies == nil || *p.replies {
		t.Errorf("after the mode change the 39006 echoes %v, want false", p.replies)
	}
	if want := []string{m2.ID, m1.ID}; !slices.Equal(p.rows, want) {
		t.Errorf("after the mode change: rows %v, want %v (top-level only)", p.rows, want)
	}

	// Access comes first: an outsider of a private channel gets no rows
	// and no 39006 in either mode.
	e.rowMode(true)
	priv := e.channel(owner, nostr.Tag{"visibility", "private"})
	e.reply(owner, priv, e.msg(owner, priv, t0+10, "p"), t0+20, "pr", false)
	if p := e.windowPage(newUser(), priv, 10, nil); len(p.rows) != 0 || p.bounds != 0 {
		t.Errorf("outsider in projection mode: %d rows, %d bounds", len(p.rows), p.bounds)
	}
	// An empty accessible channel still has its one 39006, with the mode.
	empty := e.channel(owner)
	if p := e.windowPage(owner, empty, 10, nil); p.bounds != 1 || p.hasMore || p.replies == nil || !*p.replies {
		t.Errorf("empty channel: %d bounds, has_more %v, mode %v", p.bounds, p.hasMore, p.replies)
	}
}
