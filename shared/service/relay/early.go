package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/sessions"
)

// The early answer: a live REQ for the newest stored events, of a
// connection whose sessions live in DynamoDB, is read before its
// subscription is stored rather than after, so that the REQ waits for the
// database alone (the session store's writes take several round trips).
// What that costs:
//   - An event committed after the read's snapshot whose fan-out read its
//     audience before the subscription was stored is not sent live. Once
//     stored, the subscription catches up (catchUp): the events committed
//     after the read's snapshot (store.Seen, events.xact) go through live
//     delivery's rules to this subscription alone (fanout.Fanout.CatchUp).
//   - An event both the catch-up and a fan-out deliver would go out
//     twice: for claimWindow the subscription is stored with a claiming
//     window (session.Subscription.ClaimsUntil), and each deliverer claims
//     each stored event in the session store first; only the first sends
//     it. A catch-up that could not start within catchUpWithin ends the
//     subscription (CLOSED error:, the client may REQ again) rather than
//     leave what it read to a window about to close; a fan-out that reads
//     its audience more than claimWindow - catchUpWithin after its commit
//     (a handed-off batch under load) may send a second copy of an event
//     the catch-up sent.
//   - A refusal by the subscription limits would come after EOSE: only a
//     REQ the registry knows has room goes early (sessions.Registry.Reserve),
//     and a later REQ stored here waits for it once its connection or key
//     is past half a limit (sessions.Registry.awaitAnswered); should the
//     store refuse it all the same (other instances added subscriptions to
//     the same connection or key), CLOSED follows EOSE.
//   - A CLOSE sent on EOSE (nostr-tools' querySync, NDK's and welshman's
//     one-shot loads) most often comes before the subscription would be
//     stored: every CLOSE leaves a tombstone first
//     (sessions.Registry.CloseSub), and the answered REQ waits closeGrace,
//     reads it (ClosedSince) and stores nothing when it is there: such a
//     read costs the session store one read besides the CLOSE's two
//     writes, where storing and removing it took about ten requests. A
//     CLOSE that comes later, while the store lands, is read once the
//     store landed, and what was stored is withdrawn (WithdrawIfClosed):
//     whichever lands last removes the subscription.
//   - The subscription is live closeGrace and one store later than its
//     answer; what committed meanwhile comes by the catch-up. A REQ whose
//     id names a subscription its connection holds, as this instance
//     learnt from its stores (Reservation.Replaces), replaces it without
//     the grace, so the old filters end one store after its EOSE, as
//     before; one stored through another instance since is replaced
//     after the grace. An early answer still waiting when
//     its id is closed or asked for again on this instance is not stored
//     (Registry.Supersede): the later REQ's filters hold the id.
//   - An event that is never stored (ephemeral, a relay-signed overlay)
//     cannot be caught up: a REQ whose filters may ask for one waits for
//     its store, as before (storedOnly).

// claimWindow is how long an early answer's subscription is claimed for,
// from its REQ; its catch-up starts within catchUpWithin or not at all.
// closeGrace is how long after its answer the subscription waits before
// it is stored: a one-shot read's CLOSE, sent on EOSE, comes within it
// from a client up to about 30 ms away from the relay's region (the
// round trip, API Gateway's and the CLOSE's invocation), and nothing is
// stored for that REQ.
const (
	claimWindow   = 10 * time.Second
	catchUpWithin = 8 * time.Second
	closeGrace    = 50 * time.Millisecond
)

// mayAnswerEarly reports whether a live REQ for the newest stored events
// may be read while its subscription is stored, with its place in the
// limits' counts when it may.
func (r *Relay) mayAnswerEarly(c Caller, req Request) (*sessions.Reservation, bool) {
	if r.Fanout == nil || r.Reader == nil || !storedOnly(req.Filters) {
		return nil, false
	}
	return r.Sessions.Reserve(c.Connection, c.Community, c.Pubkey, req.Sub, sessions.DefaultLimits)
}

// storedOnly reports whether filters can match stored events only: each
// names its kinds, none of them one never stored.
func storedOnly(filters []nostr.Filter) bool {
	if len(filters) == 0 {
		return false
	}
	for _, f := range filters {
		if len(f.Kinds) == 0 || slices.ContainsFunc(f.Kinds, func(k int) bool { return kinds.StorageOf(k, true) == kinds.StoreNever }) {
			return false
		}
	}
	return true
}

// subscribeEarly answers a live REQ the door admitted before its
// subscription is stored (res: its place in the limits' counts): the
// read, with its snapshot, and what follows the answer: closeGrace for a
// CLOSE sent on EOSE, then, unless one came, the store and its verdict,
// the catch-up and the record for a replay.
func (r *Relay) subscribeEarly(ctx context.Context, c Caller, req Request, row session.NewSubscription, read sessions.Reading, res *sessions.Reservation, start time.Time) ([]json.RawMessage, func(context.Context) error, error) {
	evs, seen, err := r.Reader.ReqSeen(ctx, c.Community, c.Pubkey, req.Filters)
	if err != nil {
		r.Sessions.Release(res)
		return nil, nil, r.dropFailed(ctx, c, req.Sub, err)
	}
	return evs, func(ctx context.Context) error {
		// A REQ that replaces a subscription of its id is stored at once
		// after its answer: the old filters must not outlive its EOSE by
		// the grace.
		if !res.Replaces() {
			if closed, err := r.closedInGrace(ctx, c, row, res, start); closed || err != nil {
				return err
			}
		}
		if err := r.Sessions.PutHeld(ctx, row, sessions.DefaultLimits, res); err != nil {
			return fmt.Errorf("relay: subscribe %s: %w", req.Sub, err)
		}
		// A CLOSE may have come while the store landed (its tombstone):
		// withdrawn, nothing more to send.
		closed, err := r.Sessions.WithdrawIfClosed(ctx, row, start)
		switch {
		case closed:
			if err != nil {
				r.Log.ErrorContext(ctx, "relay: withdraw a closed subscription", "connection", c.Connection, "sub", req.Sub, "err", err)
			}
			return nil
		case err != nil:
			return r.dropFailed(ctx, c, req.Sub, err)
		case r.Sessions.Superseded(res):
			// A later REQ of the id, here, answers for it now: nothing
			// of this one's filters is caught up.
			return nil
		}
		if err := r.catchUp(ctx, c, row, seen, start); err != nil {
			return r.dropFailed(ctx, c, req.Sub, err)
		}
		return r.answered(c, req, read, newestOf(evs))(ctx)
	}, nil
}

// closedInGrace waits closeGrace and reports whether row's REQ needs no
// store after all: its id was closed (a one-shot read's CLOSE on EOSE:
// its tombstone) or asked for again here meanwhile. Its reservation is
// then handed back.
func (r *Relay) closedInGrace(ctx context.Context, c Caller, row session.NewSubscription, res *sessions.Reservation, start time.Time) (bool, error) {
	select {
	case <-time.After(closeGrace):
	case <-ctx.Done():
		r.Sessions.Release(res)
		return true, fmt.Errorf("relay: subscribe %s: %w", row.Sub, ctx.Err())
	}
	if r.Sessions.Superseded(res) {
		return true, nil
	}
	closed, err := r.Sessions.ClosedSince(ctx, row.Connection, row.Sub, start)
	if err != nil {
		r.Log.WarnContext(ctx, "relay: a CLOSE before the store", "connection", c.Connection, "sub", row.Sub, "err", err)
	}
	if closed {
		r.Sessions.Release(res)
	}
	return closed, nil
}

// errLate: the subscription was stored too late for its catch-up to be
// claimed against live delivery.
var errLate = errors.New("relay: the subscription was stored too late to catch up; send the REQ again")

// catchUp delivers to the stored subscription row what committed after
// its read's snapshot seen.
func (r *Relay) catchUp(ctx context.Context, c Caller, row session.NewSubscription, seen store.Seen, start time.Time) error {
	if r.Sessions.Now().Sub(start) > catchUpWithin {
		return errLate
	}
	raws, err := r.Reader.CommittedAfter(ctx, c.Community, seen)
	if err != nil {
		return fmt.Errorf("relay: catch up: %w", err)
	}
	if err := r.Fanout.CatchUp(ctx, c.Community, row.Subscription, raws); err != nil {
		return fmt.Errorf("relay: catch up: %w", err)
	}
	return nil
}
