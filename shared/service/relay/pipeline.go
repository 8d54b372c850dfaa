package relay

// The use-case layer's two paths, each step a small named function run in
// the order listed; the first error ends the path. The write path is every
// publish's (EVENT over WebSocket, POST /events); the read path every
// one-shot read's (POST /query and its read-state snapshot, POST /count,
// COUNT). The rules of a write are ingest's own list (ingest/pipeline.go);
// the plans of a read the query engine's (shared/service/query). A REQ
// (Subscribe) stores its subscription before it reads, its order in
// Subscribe itself.

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
)

// writePath is a publish up to its verdict, in order; live delivery
// (deliver) follows once the transport has answered (PublishThenDeliver).
var writePath = []struct {
	name string
	run  func(r *Relay, ctx context.Context, w *write) error
}{
	{"authorship: the event's key is the authenticated key (kinds.AnyAuthor aside)", (*Relay).authorship},
	{"the door: served, rate limits, AUTH, the NIP-43 gate (guard.Guard.Admit)", (*Relay).admitWrite},
	{"the rules and the store in one transaction (ingest.SubmitAt, ingest/pipeline.go)", (*Relay).submit},
	{"after a request to vanish (NIP-62) committed, its media objects deleted", (*Relay).eraseVanished},
}

// readPath is a one-shot read, in order.
var readPath = []struct {
	name string
	run  func(r *Relay, ctx context.Context, rd *read) error
}{
	{"the door: served, rate limits, AUTH, the NIP-43 gate (guard.Guard.Admit)", (*Relay).admitRead},
	{"the engine: validated, planned, read in one snapshot under the access rule (query.Engine)", (*Relay).runRead},
}

// write is one publish on the write path.
type write struct {
	c   Caller
	ev  *nostr.Event
	out ingest.Outcome
	// cutoff is the commit's position among the subscriptions, taken as
	// the commit returned, before the verdict (fanout.Fanout.Cutoff).
	cutoff int64
}

// read is one read on the read path: its action at the door and the
// engine's call that answers it.
type read struct {
	c      Caller
	action guard.Action
	engine func(ctx context.Context) error
}

func (r *Relay) publish(ctx context.Context, w *write) error {
	for _, step := range writePath {
		if err := step.run(r, ctx, w); err != nil {
			return err
		}
	}
	return nil
}

func (r *Relay) read(ctx context.Context, rd *read) error {
	for _, step := range readPath {
		if err := step.run(r, ctx, rd); err != nil {
			return err
		}
	}
	return nil
}

func (r *Relay) authorship(_ context.Context, w *write) error {
	if w.c.Pubkey == "" {
		return nil // the door refuses it: auth-required
	}
	return authored(w.ev, w.c.Pubkey)
}

func (r *Relay) admitWrite(ctx context.Context, w *write) error {
	action := guard.Publish
	switch w.ev.Kind {
	case kinds.RelayJoinRequest:
		action = guard.Join // a key that is no member yet asks to become one
	case kinds.Vanish:
		action = guard.Vanish // a key no longer admitted may still have data here
	}
	d := r.door(w.c, action)
	d.NewChannel = w.ev.Kind == kinds.CreateGroup
	if action == guard.Join {
		d.Claim, _ = filter.TagValue(w.ev.Tags, "claim") // what a made-up code costs (guard.Join)
	}
	return r.admit(ctx, w.c, d)
}

func (r *Relay) submit(ctx context.Context, w *write) error {
	out, err := r.Ingest.SubmitAt(ctx, w.c.Community, w.c.Origin, w.c.Pubkey, w.ev)
	if err != nil {
		return fmt.Errorf("relay: publish: %w", err)
	}
	w.out = out
	if len(out.Committed) > 0 && r.Fanout != nil {
		// Before the verdict is sent: a subscription opened once it is
		// known reads the event, and delivery leaves it out.
		if w.cutoff, err = r.Fanout.Cutoff(ctx); err != nil {
			r.Log.WarnContext(ctx, "relay: the commit's cutoff", "err", err) // delivery takes its own
		}
	}
	return nil
}

func (r *Relay) eraseVanished(ctx context.Context, w *write) error {
	if w.out.Vanished != nil {
		r.erase(ctx, w.c, w.ev, *w.out.Vanished)
	}
	return nil
}

// deliver is the last step, after the verdict: live delivery to the
// subscriptions stored at commit (fanout).
func (r *Relay) deliver(ctx context.Context, w *write) {
	if len(w.out.Committed) > 0 && r.Fanout != nil {
		r.Fanout.DeliverFrom(ctx, w.c.Community, w.out.Committed, w.out.Delivery, w.cutoff)
	}
}

func (r *Relay) admitRead(ctx context.Context, rd *read) error {
	return r.admit(ctx, rd.c, r.door(rd.c, rd.action))
}

func (r *Relay) runRead(ctx context.Context, rd *read) error { return rd.engine(ctx) }
