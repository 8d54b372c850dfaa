package query

import (
	"strings"
	"testing"
)

// TestWindowOverResponseLimitIsInvalid (issue 11 item 14): a window whose
// aux closure would pass the HTTP response budget is refused with a clear
// invalid: instead of a broken (over-limit) response; the closure under
// the budget stays complete. The budget is lowered so a few reactions
// pass it; in production it is relayinfo.MaxHTTPResponseLength.
func TestWindowOverResponseLimitIsInvalid(t *testing.T) {
	e := newEnv(t)
	owner := newUser()
	ch := e.channel(owner)
	m := e.msg(owner, ch, t0+10, "popular")
	for i := 0; i < 12; i++ {
		e.react(newUser(), m, t0+20+int64(i))
	}
	// kinds 9: since issue 52 the channel's 40099 rows are window rows too,
	// and the fixture's write clock (t0+300) dates the creation's row after
	// the message, which would be the one row of a kindless window.
	body := `[{"kinds":[9],"#h":["` + ch + `"],"top_level":true,"include_aux":true,"limit":1}]`
	if got := e.query(owner, body); len(got) != 1+12+1 {
		t.Fatalf("full closure: %d events, want 14", len(got))
	}
	e.q.httpBudget = 4000
	_, err := e.q.Query(e.ctx, "default", testHost, owner.pk, []byte(body))
	if r, ok := asInvalid(err); !ok || !strings.Contains(r.Reason, "response would be over 4000 bytes") {
		t.Fatalf("over the budget: %v", err)
	}
}
