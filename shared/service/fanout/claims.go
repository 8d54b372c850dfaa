package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// A live REQ whose subscription is stored while its read runs (the
// relay's early answer) may miss what committed in between: the
// subscription's catch-up (CatchUp) delivers that, and a commit whose
// fan-out already saw the subscription may deliver the same event. Both
// claim each stored event for the subscription first (session.Claimer)
// and only the first sends it: the subscription carries how long its
// claims last (session.Subscription.ClaimsUntil), a catch-up claims
// always.

// claim drops from plans what another deliverer claimed first, for the
// candidates that claim: each of their stored events is claimed, all at
// once. A claim that fails is sent anyway (an event twice rather than
// none) and logged.
func (f *Fanout) claim(ctx context.Context, cands []candidate, plans []planned) {
	now := f.now().Unix()
	type ask struct{ cand, msg int }
	var asks []ask
	for i := range cands {
		if !cands[i].claim && cands[i].claimsUntil <= now {
			continue
		}
		for j, id := range plans[i].ids {
			if id != "" {
				asks = append(asks, ask{i, j})
			}
		}
	}
	if len(asks) == 0 {
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, f.concurrency())
	for _, a := range asks {
		c := &cands[a.cand]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			won, err := f.Sessions.Claim(ctx, session.ClaimParams{Connection: c.connection, Sub: c.sub,
				Event: plans[a.cand].ids[a.msg], Until: max(c.claimsUntil, now)})
			if err != nil {
				f.Log.WarnContext(ctx, "fanout: claim", "connection", c.connection, "sub", c.sub, "err", err)
				return
			}
			if !won {
				plans[a.cand].msgs[a.msg] = nil // each ask its own message
			}
		})
	}
	wg.Wait()
	for i := range plans {
		plans[i].msgs = slices.DeleteFunc(plans[i].msgs, func(m []byte) bool { return m == nil })
	}
}

// concurrency is the posts (and claims) in flight at once.
func (f *Fanout) concurrency() int {
	if f.Concurrency > 0 {
		return f.Concurrency
	}
	return DefaultConcurrency
}

// CatchUp delivers to subscription sub of community, under the rules of
// live delivery (the door, access, its filters) and claiming each event
// first, the stored events raws: those committed after its REQ's read
// took its snapshot, which a commit that read its audience before the
// subscription was stored did not send it.
func (f *Fanout) CatchUp(ctx context.Context, community string, sub session.Subscription, raws []string) error {
	if len(raws) == 0 {
		return nil
	}
	events := make([]*nostr.Event, 0, len(raws))
	for _, raw := range raws {
		ev := new(nostr.Event)
		if err := json.Unmarshal([]byte(raw), ev); err != nil {
			return fmt.Errorf("fanout: catch-up: stored event: %w", err)
		}
		events = append(events, ev)
	}
	d, err := f.Store.DeliveriesGet(ctx, community, f.Request(events))
	if err != nil {
		return fmt.Errorf("fanout: catch-up: %w", err)
	}
	items, err := f.items(ctx, community, events, d)
	if err != nil {
		return fmt.Errorf("fanout: catch-up: %w", err)
	}
	if len(items) == 0 {
		return nil
	}
	c := candidatesOfOne(sub)
	f.deliverTo(ctx, community, items, c)
	return nil
}

// candidatesOfOne is sub as the one candidate of a catch-up, which claims.
func candidatesOfOne(sub session.Subscription) []candidate {
	cands, _ := candidatesOf([]session.Subscription{sub}, nil)
	cands[0].claim = true
	return cands
}
