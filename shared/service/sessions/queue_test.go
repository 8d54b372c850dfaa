package sessions

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// fullStore refuses a subscription as past its connection's limit until
// room is made (its first refusals), then stores it.
type fullStore struct {
	session.Store
	refusals, calls atomic.Int32
}

func (s *fullStore) Subscribe(context.Context, NewSubscription, Limits) error {
	if s.calls.Add(1) <= s.refusals.Load() {
		return ErrConnectionFull
	}
	return nil
}

// Issue 56: a subscription past a limit waits for room (a burst of
// one-shot reads closed on EOSE makes it), and only one still past it
// after Queue is refused, quoting the client's own id, a reconciliation's
// too (never the session store's NEG-OPEN… key).
func TestPutQueuesForRoomThenRefusesWithTheClientsID(t *testing.T) {
	ctx := context.Background()
	st := &fullStore{}
	st.refusals.Store(3)
	r := NewRegistry(st)
	r.Queue = 2 * time.Second
	row := NewSubscription{Subscription: Subscription{Connection: "c", Sub: "s1"}}
	if err := r.Put(ctx, row, DefaultLimits); err != nil || st.calls.Load() != 4 {
		t.Fatalf("a REQ that finds room after 3 tries: %v after %d tries", err, st.calls.Load())
	}

	st.calls.Store(0)
	st.refusals.Store(1 << 20)
	r.Queue = 100 * time.Millisecond
	row.Sub = ReconcileKey("NEG-65373979")
	start := time.Now()
	err := r.Put(ctx, row, DefaultLimits)
	if err == nil || !strings.HasPrefix(err.Error(), "restricted:") || !strings.Contains(err.Error(), `"NEG-65373979"`) || strings.Contains(err.Error(), "NEG-OPEN") {
		t.Fatalf("refusal: %v", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond || waited > time.Second {
		t.Fatalf("refused after %v, want the queue's 100ms", waited)
	}

	r.Queue = 0
	st.calls.Store(0)
	if err := r.Put(ctx, row, DefaultLimits); err == nil || st.calls.Load() != 1 {
		t.Fatalf("without a queue: %v after %d tries", err, st.calls.Load())
	}
	if ClientSub(ReconcileKey("x")) != "x" || ClientSub("plain") != "plain" {
		t.Fatal("ClientSub")
	}
}

// A connection that keeps closing subscriptions keeps its queued REQ
// waiting past Queue (a burst answered slower than Queue), up to QueueMax.
func TestQueueWaitsWhileTheConnectionCloses(t *testing.T) {
	st := &fullStore{}
	st.refusals.Store(1 << 20)
	r := NewRegistry(st)
	r.Queue = 200 * time.Millisecond
	stop := make(chan struct{})
	go func() {
		for range 5 {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				r.sawClose("c")
			}
		}
	}()
	defer close(stop)
	start := time.Now()
	if err := r.Put(context.Background(), NewSubscription{Subscription: Subscription{Connection: "c", Sub: "s"}}, DefaultLimits); err == nil {
		t.Fatal("stored")
	}
	if waited := time.Since(start); waited < 600*time.Millisecond {
		t.Fatalf("refused after %v, while the connection closed a subscription every 100 ms for 500 ms", waited)
	}
	if d := r.QueueDeadline("c", start).Sub(start); d > QueueMax {
		t.Fatalf("deadline %v past QueueMax", d)
	}
}
