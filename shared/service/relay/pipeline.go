package relay

// The use-case layer's paths, each step a small named function run in the
// order listed; the first error ends the path. The write path is every
// publish's (EVENT over WebSocket, POST /events), live delivery its last
// step once the transport answered (livePath lists fan-out's steps); the
// read path every one-shot read's (POST /query and its read-state
// snapshot, POST /count, COUNT); the REQ path every REQ's (Subscribe), a
// step that answers it ending it. The rules of a write are ingest's own
// list (ingest/pipeline.go); the plans of a read the query engine's
// (shared/service/query). docs/architecture.md walks them hop by hop.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/invites"
	"github.com/buzzrelay/relay/shared/service/query"
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

// reqPath is a REQ up to its answer, in order; a step that answers it
// ends the path (subscription.done). What follows the answer (a replay's
// record, an early answer's store and catch-up) is returned undone
// (subscription.after) for the transport to run once EOSE is out.
var reqPath = []struct {
	name string
	run  func(r *Relay, ctx context.Context, q *subscription) error
}{
	{"the share: one answer at most relayinfo.MaxREQEvents events across its filters (ShareREQLimit)", (*Relay).shareREQ},
	{"an invite asked for (NIP-43, kind 28935): minted for an owner or admin, one-shot (invites.Service.InviteEvent)", (*Relay).reqInvite},
	{"nothing live after EOSE (a search, thread windows, filters that end before now): the door, a live subscription of the id ended, the read (oneShot)", (*Relay).reqOneShot},
	{"no key: the door refuses it auth-required: before the session store is asked", (*Relay).reqKeyless},
	{"live: stored, then answered from the session store (the mark, a resume record) or by the database, or answered early and stored after (subscribeLive, early.go)", (*Relay).reqLive},
}

// livePath is live delivery after a commit, in order: the write path's
// last step (deliver) hands the committed events to fan-out
// (fanout.Fanout.DeliverFrom), whose steps these are.
var livePath = []string{
	"the commit's cutoff among the subscriptions, taken before the verdict is sent (fanout.Fanout.Cutoff)",
	"push and workflow triggers told of the commit (push and workflow Committed)",
	"what delivery needs, read in the commit's own round trip (store.Delivery.Deliveries)",
	"the audience from the session store up to the cutoff (fanout.Fanout.audienceAfterCommit: sessions.Registry.AudienceRange)",
	"past FANOUT_INLINE_MAX, handed to the fan-out function in one invoke (fanout.Fanout.handOff)",
	"else matched, the readers asked of the door, each event claimed and posted (fanout.Fanout.deliverTo)",
}

// subscription is one REQ on the REQ path.
type subscription struct {
	c     Caller
	req   Request
	evs   []json.RawMessage
	after func(context.Context) error // never nil
	done  bool                        // answered: the path ends
}

func (r *Relay) subscribe(ctx context.Context, q *subscription) error {
	for _, step := range reqPath {
		if err := step.run(r, ctx, q); err != nil || q.done {
			return err
		}
	}
	return nil
}

func (r *Relay) shareREQ(_ context.Context, q *subscription) error {
	q.req.Filters = ShareREQLimit(q.req.Filters, relayinfo.MaxREQEvents)
	return nil
}

func (r *Relay) reqInvite(ctx context.Context, q *subscription) (err error) {
	if r.Invites == nil || !invite.AsksForInvite(q.req.Filters) {
		return nil
	}
	q.done = true
	q.evs, err = r.Invites.InviteEvent(ctx, invites.Caller{Community: q.c.Community, Pubkey: q.c.Pubkey, Connection: q.c.Connection})
	return err
}

func (r *Relay) reqOneShot(ctx context.Context, q *subscription) (err error) {
	if q.req.ThreadWindows == nil && !slices.ContainsFunc(q.req.Filters, query.IsSearch) && !EndsAtEOSE(q.req.Filters, r.Sessions.Now()) {
		return nil
	}
	q.done = true
	q.evs, err = r.oneShot(ctx, q.c, q.req)
	return err
}

func (r *Relay) reqKeyless(ctx context.Context, q *subscription) error {
	if q.c.Pubkey != "" {
		return nil
	}
	return r.admit(ctx, q.c, r.door(q.c, guard.Read))
}

func (r *Relay) reqLive(ctx context.Context, q *subscription) error {
	evs, then, err := r.subscribeLive(ctx, q.c, q.req)
	q.evs, q.done = evs, true
	if then != nil {
		q.after = then
	}
	return err
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
