// Package expiry is the NIP-40 sweep: it deletes the events whose
// expiration has passed, in batches of one transaction each, until none is
// left or its time is up. No read serves an expired event before the sweep
// reaches it (access.Unexpired and its SQL twin); the sweep only gives the
// space back. functions/expiry-sweep runs it on an EventBridge Scheduler
// schedule, `make dev` on a timer (localdev).
package expiry

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Defaults of a Sweeper.
const (
	// DefaultBatch is the events one transaction deletes: small enough
	// that a batch holds its row locks for a fraction of a second.
	DefaultBatch = 2000
	// DefaultMargin is the time a sweep leaves before its context's
	// deadline: the next batch starts only with at least this much left.
	DefaultMargin = 5 * time.Second
)

// Deleter deletes up to limit expired events of every community (expiry
// at or before now, unix seconds) and says how many it deleted
// (store.Store.EventsDeleteExpired).
type Deleter interface {
	EventsDeleteExpired(ctx context.Context, now int64, limit int) (int64, error)
}

// Sweeper deletes expired events.
type Sweeper struct {
	Store Deleter
	Log   *slog.Logger
	// Batch (DefaultBatch when 0) and Margin (DefaultMargin when 0).
	Batch  int
	Margin time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Result is what one sweep did.
type Result struct {
	Deleted int64
	Batches int
	// Done: the last batch found fewer than Batch events, so nothing
	// expired before the sweep started is left; false when the sweep
	// stopped for its deadline (the next run goes on).
	Done bool
}

// Sweep deletes every event expired at its start, a batch at a time, and
// stops early when ctx's deadline is nearer than Margin.
func (s *Sweeper) Sweep(ctx context.Context) (Result, error) {
	batch, margin, now := s.Batch, s.Margin, s.Now
	if batch <= 0 {
		batch = DefaultBatch
	}
	if margin <= 0 {
		margin = DefaultMargin
	}
	if now == nil {
		now = time.Now
	}
	start := now()
	at := start.Unix()
	var r Result
	for {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < margin {
			break
		}
		n, err := s.Store.EventsDeleteExpired(ctx, at, batch)
		if err != nil {
			return r, fmt.Errorf("expiry sweep: batch %d: %w", r.Batches+1, err)
		}
		r.Deleted += n
		r.Batches++
		if n < int64(batch) {
			r.Done = true
			break
		}
	}
	if s.Log != nil {
		s.Log.InfoContext(ctx, "expiry sweep", "deleted", r.Deleted, "batches", r.Batches, "done", r.Done,
			"took_ms", time.Since(start).Milliseconds())
	}
	return r, nil
}
