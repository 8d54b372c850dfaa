package sessions

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// fullStore refuses every subscription as past its connection's limit
// (or its key's, with key), counting the tries.
type fullStore struct {
	session.Store
	key   bool
	calls atomic.Int32
}

func (s *fullStore) Subscribe(context.Context, session.NewSubscription, session.Limits) (session.Held, error) {
	s.calls.Add(1)
	if s.key {
		return session.Held{}, session.ErrKeyFull
	}
	return session.Held{}, session.ErrConnectionFull
}

// Issue 56: a subscription past a limit is refused at once, after one
// try (no invocation waits for room that a CLOSE queued behind it on the
// same instance would make), quoting the client's own id, a
// reconciliation's too (never the session store's NEG-OPEN… key).
func TestPutRefusesAtOnceWithTheClientsID(t *testing.T) {
	for _, tc := range []struct {
		key    bool
		prefix string
	}{{false, "restricted:"}, {true, "rate-limited:"}} {
		st := &fullStore{key: tc.key}
		r := NewRegistry(st)
		for _, sub := range []string{"plain", ReconcileKey("NEG-65373979")} {
			st.calls.Store(0)
			err := r.Put(context.Background(), session.NewSubscription{Subscription: session.Subscription{Connection: "c", Sub: sub}}, DefaultLimits)
			if err == nil || !strings.HasPrefix(err.Error(), tc.prefix) || !strings.Contains(err.Error(), `"`+ClientSub(sub)+`"`) || strings.Contains(err.Error(), "NEG-OPEN") {
				t.Fatalf("refusal of %q: %v", sub, err)
			}
			if n := st.calls.Load(); n != 1 {
				t.Fatalf("%d tries, want 1", n)
			}
		}
	}
	if ClientSub(ReconcileKey("x")) != "x" || ClientSub("plain") != "plain" {
		t.Fatal("ClientSub")
	}
}
