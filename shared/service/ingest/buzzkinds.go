package ingest

import (
	"context"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// The write rules of Buzz's kinds (issue 29) that need more than the
// generic message, replaceable and ephemeral rules.

// MaxDTag bounds the d tag of a team catalog (Buzz requires a non-empty,
// bounded one so that teams do not collapse into one address).
const MaxDTag = 256

// sharedGated checks the shared tag of a shared-gated kind (30175, 30178):
// none (author-only) or exactly one ["shared","true"]; a team catalog also
// needs exactly one non-empty, bounded d tag. Then it is a replaceable
// event like any other.
func (a *apply) sharedGated(ctx context.Context) error {
	n := 0
	for _, t := range a.ev.Tags {
		if len(t) == 0 || t[0] != kinds.SharedTag {
			continue
		}
		if len(t) != 2 || t[1] != kinds.SharedValue {
			return reject.Invalidf("a shared tag must be exactly [%q, %q]", kinds.SharedTag, kinds.SharedValue)
		}
		n++
	}
	if n > 1 {
		return reject.Invalidf("kind %d takes at most one shared tag, this one has %d", a.ev.Kind, n)
	}
	if a.ev.Kind == kinds.TeamCatalog {
		var ds []string
		for _, t := range a.ev.Tags {
			if len(t) >= 1 && t[0] == "d" {
				v := ""
				if len(t) >= 2 {
					v = t[1]
				}
				ds = append(ds, v)
			}
		}
		if len(ds) != 1 || ds[0] == "" || len(ds[0]) > MaxDTag {
			return reject.Invalidf("kind %d needs exactly one non-empty d tag of at most %d bytes", a.ev.Kind, MaxDTag)
		}
	}
	return a.replaceable(ctx)
}

// reminder checks a NIP-ER reminder's tags (eventcheck.Reminder); then it
// is a replaceable event like any other, readable by its author only.
func (a *apply) reminder(ctx context.Context) error {
	if err := eventcheck.Reminder(a.ev.Tags); err != nil {
		return err
	}
	return a.replaceable(ctx)
}

// pushSubscription stores a push subscription (30390) or lease (30350)
// with its effective state, once the push rules accepted it; without them
// (or with leases off) a lease is stored as an author-only event, and
// without them a subscription is refused.
func (a *apply) pushSubscription(ctx context.Context) error {
	if a.s.push == nil {
		if a.ev.Kind == kinds.PushLease {
			return a.replaceable(ctx)
		}
		return reject.Restrictedf("push subscriptions are not enabled on this relay")
	}
	row, err := a.s.push.Accept(ctx, a.tx, a.ev, a.now)
	if err != nil {
		return err
	}
	if err := a.replaceable(ctx); err != nil || row == nil {
		return err
	}
	return a.tx.PushSubscriptionsUpsert(ctx, *row)
}

// vote stores a forum vote (45002) in the channel of the post or comment
// its last e tag names, one per key and target: to change it, the key
// deletes its vote (kind 5) and votes again.
func (a *apply) vote(ctx context.Context) error {
	id := ""
	for _, t := range a.ev.Tags {
		if len(t) >= 2 && t[0] == "e" {
			id = t[1]
		}
	}
	if id == "" {
		return reject.Invalidf("a forum vote needs an e tag naming the post or comment")
	}
	ref, err := a.target(ctx, id, "vote", ErrVoteTarget)
	if err != nil {
		return err
	}
	if ref.Kind != kinds.ForumPost && ref.Kind != kinds.ForumComment {
		return reject.Invalidf("vote target %s is not a forum post or comment", id)
	}
	n, err := a.tx.EventsCountVotes(ctx, ref.ID, a.ev.PubKey)
	if err != nil {
		return err
	}
	if n > 0 {
		return reject.Duplicatef("you already voted on %s: delete that vote to change it", ref.ID)
	}
	return a.store(ctx, records.EventMeta{ChannelID: ref.ChannelID, TopLevel: true, Last: true})
}

// forumComment is a reply in a forum thread (45003): it must name its
// parent with a NIP-10 reply marker.
func (a *apply) forumComment(ctx context.Context) error {
	if _, ok := nip29.ParseReply(a.ev.Tags); !ok {
		return reject.Invalidf("a forum comment needs an e tag with a reply marker naming its post or comment")
	}
	return a.message(ctx)
}

// recipientEphemeral checks the p tag of a #p-gated ephemeral kind (24200):
// delivered only to its p, so it must name one.
func (a *apply) recipientEphemeral() error {
	p, ok := filter.TagValue(a.ev.Tags, "p")
	if !ok || !eventcheck.LowerHex(p, 64) {
		return reject.Invalidf("kind %d needs a p tag naming its recipient's 64-hex public key", a.ev.Kind)
	}
	return nil
}

// hiddenFrom reports whether ref is an event of a reader-gated kind
// (kinds.Gated) by another key than the sender's: a reaction, vote, edit
// or deletion naming it is answered as if it were not stored, so the
// answer is no oracle for its existence.
func (a *apply) hiddenFrom(ref *records.EventRef) bool {
	return kinds.Gated(ref.Kind) && ref.Pubkey != a.ev.PubKey
}

// gatedDeletion: a deletion (kind 5) of an event of a reader-gated kind
// (kinds.Gated) hides its target but is not stored itself: stored, anyone
// could read its e or a tag and learn the id or address of an event only
// its author (or its p) may know exists.
