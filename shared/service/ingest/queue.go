package ingest

import (
	"context"
	"fmt"
	"sync"
)

// channelQueue lets one write per channel of this process at a time take
// a pool connection and wait for the channel's row lock; the others wait
// here, holding none. So a burst of changes to one channel never holds the
// whole pool waiting for that lock, and its holder always finds a
// connection when it must read through the pool (its preparation: the
// sessions' membership gate) while it holds the lock. Across processes
// the row lock alone orders them.
type channelQueue struct {
	mu    sync.Mutex
	turns map[string]*turn
}

// turn is one channel's queue: a one-slot semaphore and how many writes
// hold it or wait for it.
type turn struct {
	slot    chan struct{}
	waiting int
}

func newChannelQueue() *channelQueue { return &channelQueue{turns: map[string]*turn{}} }

// wait returns once the caller's turn at key came, with the function that
// ends it (once: later calls do nothing); it gives up when ctx ends.
func (q *channelQueue) wait(ctx context.Context, key string) (func(), error) {
	q.mu.Lock()
	t := q.turns[key]
	if t == nil {
		t = &turn{slot: make(chan struct{}, 1)}
		q.turns[key] = t
	}
	t.waiting++
	q.mu.Unlock()
	leave := func() {
		q.mu.Lock()
		if t.waiting--; t.waiting == 0 {
			delete(q.turns, key)
		}
		q.mu.Unlock()
	}
	select {
	case t.slot <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-t.slot; leave() }) }, nil
	case <-ctx.Done():
		leave()
		return nil, fmt.Errorf("ingest: waiting for channel %s: %w", key, ctx.Err())
	}
}
