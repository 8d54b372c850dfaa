package ratelimit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
)

// messages is a session store's message counter: it counts each call.
type messages struct {
	mu     sync.Mutex
	totals map[string]int64
	calls  int
}

func (m *messages) CountMessage(_ context.Context, p session.CountParams) (int64, error) {
	connection, windowStart := p.Connection, p.WindowStart
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.totals == nil {
		m.totals = map[string]int64{}
	}
	k := fmt.Sprint(connection, "@", windowStart)
	m.totals[k]++
	return m.totals[k], nil
}

// TestMessageCountedAheadIsCountedOnce protects a WebSocket message's
// limit when its count runs ahead of the door (a REQ's, alongside the
// session store's reads): the check decides on that count and counts the
// message no more, refusing past the limit as a check that counted it
// would; a key on the allow list is counted neither way.
func TestMessageCountedAheadIsCountedOnce(t *testing.T) {
	ctx := context.Background()
	m := &messages{}
	lm := ratelimit.New(nil, ratelimit.Limits{MessagesPerMinute: 2, Allow: map[string]bool{"ok": true}}).WithMessages(m)
	for i := 1; i <= 3; i++ {
		c := lm.CountMessage(ctx, "c", "pk", "conn")
		if c == nil {
			t.Fatal("not counted ahead")
		}
		err := lm.Check(ctx, ratelimit.Request{Community: "c", Pubkey: "pk", Connection: "conn", Counted: c})
		if m.calls != i {
			t.Fatalf("message %d: %d counts, want %d", i, m.calls, i)
		}
		if r, ok := reject.As(err); (i <= 2 && err != nil) || (i == 3 && (!ok || r.Prefix != reject.RateLimited)) {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	// Without a count ahead, the check counts it itself (and refuses).
	if err := lm.Check(ctx, ratelimit.Request{Community: "c", Pubkey: "pk", Connection: "conn"}); err == nil || m.calls != 4 {
		t.Fatalf("counted by the check: %v after %d counts", err, m.calls)
	}
	if c := lm.CountMessage(ctx, "c", "ok", "conn"); c != nil || m.calls != 4 {
		t.Fatalf("an allowed key counted ahead: %v, %d counts", c, m.calls)
	}
	if c := lm.CountMessage(ctx, "c", "pk", ""); c != nil {
		t.Fatal("a call without a connection counted ahead")
	}
}
