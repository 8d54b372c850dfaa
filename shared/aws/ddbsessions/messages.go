package ddbsessions

import (
	"context"
	"sync"
)

// messageCounts adds the message counts of one counter that come while
// its write is in flight into the next write: at most one write per
// counter runs here, and one gathers what comes meanwhile. Each count
// gets its own total, so the counter's totals stay one per message, as
// if each had been counted alone. The zero value is ready.
type messageCounts struct {
	mu sync.Mutex
	m  map[string]*counterState
}

type counterState struct {
	running bool
	next    *countRound // gathering, not sent yet
}

// countRound is one write of k counts and its result.
type countRound struct {
	k     int64
	total int64
	err   error
	done  chan struct{}
}

// count counts one message of counter key through add (which adds k to
// the counter and returns its total) and returns this message's total.
func (mc *messageCounts) count(ctx context.Context, key string, add func(context.Context, int64) (int64, error)) (int64, error) {
	mc.mu.Lock()
	if mc.m == nil {
		mc.m = map[string]*counterState{}
	}
	c := mc.m[key]
	if c == nil {
		c = &counterState{}
		mc.m[key] = c
	}
	if c.next == nil {
		c.next = &countRound{done: make(chan struct{})}
	}
	r := c.next
	r.k++
	mine := r.k
	if !c.running {
		c.running, c.next = true, nil
		// The writes run apart from any one caller's cancellation: each
		// round serves every caller that joined it.
		go mc.run(context.WithoutCancel(ctx), key, c, r, add)
	}
	mc.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if r.err != nil {
		return 0, r.err
	}
	// This message's place among the round's k: the totals before the
	// round's last, in the order the counts joined.
	return r.total - r.k + mine, nil
}

// run writes round r, then whichever round gathered meanwhile, until
// none did.
func (mc *messageCounts) run(ctx context.Context, key string, c *counterState, r *countRound, add func(context.Context, int64) (int64, error)) {
	for r != nil {
		r.total, r.err = add(ctx, r.k)
		close(r.done)
		mc.mu.Lock()
		r, c.next = c.next, nil
		if r == nil {
			c.running = false
			delete(mc.m, key)
		}
		mc.mu.Unlock()
	}
}
