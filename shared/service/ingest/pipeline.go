package ingest

// The write path's policies, in the order they run: each a small named
// function, the first refusal wins. Submit runs beforeTx, then inTx in the
// event's one transaction; the kind's rule is kindRules' entry for its
// kind (NIP-29 moderation 9000-9022, NIP-CL and Buzz content), else
// message (a channel message or reply, or a plain stored event).

import (
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/nip62"
	"github.com/buzzrelay/relay/shared/domain/nip70"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// beforeTx are the checks that need no database, in order. A refusal is
// the verdict; nothing is read or written. (Authorship, the event signed by
// the authenticated key, is the use case's: shared/service/relay asks it
// before any limit.)
var beforeTx = []struct {
	name  string
	check func(s *Service, ev *nostr.Event, authed, origin string, now time.Time) error
}{
	{"shape, id, signature, clock, size and accepted kind", checkEvent},
	{"NIP-70 protected: only from its authenticated author", checkProtected},
	{"NIP-62 request to vanish: from its authenticated author, naming this relay", checkVanish},
}

// inTx are the policies run in the event's transaction, in order; a
// refusal rolls everything back.
var inTx = []struct {
	name string
	run  func(a *apply, ctx context.Context) error
}{
	// Its verdict travels with the next statement, and comes first.
	{"event or pubkey banned in the community", refuseBanned},
	// Moderation events change state before they are stored, so a repeat
	// must be caught first. Other kinds store the event before any side
	// effect, and the insert itself detects a repeat.
	{"moderation event already applied", refuseRepeatedModeration},
	{"the kind's write rule", kindRule},
}

// kindRules is the write rule of each kind with one of its own, in kind
// order; every other accepted kind is a message.
var kindRules = []struct {
	kind int
	name string
	rule func(a *apply, ctx context.Context) error
}{
	{kinds.Deletion, "NIP-09 deletion of one's own event", (*apply).deletion},
	{kinds.Reaction, "reaction to a readable event", (*apply).reaction},
	{kinds.Vanish, "NIP-62 request to vanish: the key's data deleted, the request kept as its tombstone", (*apply).vanish},
	{kinds.GiftWrap, "gift wrap to one recipient", (*apply).giftWrap},
	{kinds.Report, "NIP-56 report: queued for the operators, never stored", (*apply).report},
	{kinds.PutUser, "put user: admin adds or changes a role", (*apply).putUser},
	{kinds.RemoveUser, "remove user: admin removes a member", (*apply).removeUser},
	{kinds.EditMetadata, "edit metadata: admin changes the channel", (*apply).editChannel},
	{kinds.DeleteEvent, "delete event: moderator hides events", (*apply).moderationDelete},
	{kinds.CreateGroup, "create group", (*apply).createChannel},
	{kinds.DeleteGroup, "delete group: owner", (*apply).deleteChannel},
	{kinds.CreateInvite, "create invite: admin adds codes, kept by the relay", (*apply).createInvite},
	{kinds.PinEvents, "pin events: admin replaces the group's pin list, 39005", (*apply).pin},
	{kinds.JoinRequest, "join a group: open, or with an invite code", (*apply).join},
	{kinds.LeaveRequest, "leave a channel", (*apply).leave},
	{kinds.RelayAddMember, "add relay member: an owner or admin (NIP-43), 8000 and 13534", (*apply).relayCommand},
	{kinds.RelayRemoveMember, "remove relay member: an owner, or an admin a member; 8001 and 13534", (*apply).relayCommand},
	{kinds.RelayChangeRole, "change relay role: an owner; 13534", (*apply).relayCommand},
	{kinds.RelaySetProfile, "set workspace profile: an owner or admin, icon and row mode", (*apply).setProfile},
	{kinds.ModerationBan, "ban: an operator, the NIP-86 ban list", (*apply).moderationCommand},
	{kinds.ModerationUnban, "unban: an operator; with an amount tag, NIP-75's zap goal: a message", (*apply).unbanOrZapGoal},
	{kinds.ModerationTimeout, "timeout: an operator, writes blocked until expiry", (*apply).moderationCommand},
	{kinds.ModerationUntimeout, "untimeout: an operator", (*apply).moderationCommand},
	{kinds.ModerationResolve, "resolve report: an operator", (*apply).moderationCommand},
	{kinds.RelayJoinRequest, "relay join request: a valid invite's claim admits the sender (NIP-43), 8000 and 13534", (*apply).joinRelay},
	{kinds.RelayLeaveRequest, "relay leave request: a member leaves (NIP-43), 8001 and 13534", (*apply).leaveRelay},
	{kinds.Article, "article: addressable", (*apply).replaceable},
	{kinds.Persona, "agent persona: shared tag checked, replaceable", (*apply).sharedGated},
	{kinds.TeamCatalog, "team catalog: shared and d tags checked, replaceable", (*apply).sharedGated},
	{kinds.EventReminder, "NIP-ER reminder: one d, at most one well-formed not_before, any expiration after it", (*apply).reminder},
	{kinds.PushLease, "NIP-PL push lease: checked and decrypted by the executor (shared/service/push), newer by order and generation", (*apply).pushSubscription},
	{kinds.PushSubscription, "NIP-9a push subscription: relay, filters and an https callback (shared/service/push)", (*apply).pushSubscription},
	{kinds.WorkflowDef, "workflow definition: Buzz's schema, a member of its channel, its row (shared/service/workflow)", (*apply).workflowDef},
	{kinds.Edit, "edit of one's own message", (*apply).edit},
	{kinds.DMOpen, "DM open: the DM of the sender and its p keys, created or shown", (*apply).dmOpen},
	{kinds.DMAddMember, "DM add member: a participant opens the DM of a larger set", (*apply).dmAddMember},
	{kinds.DMHide, "DM hide: a participant hides it from their own list (30622)", (*apply).dmHide},
	{kinds.ProductFeedback, "product feedback: kept for the operators, never stored", (*apply).feedback},
	{kinds.AgentTurnMetric, "agent turn metric to one recipient", (*apply).giftWrap},
	{kinds.ForumVote, "forum vote: one per key and target", (*apply).vote},
	{kinds.ForumComment, "forum comment: a reply", (*apply).forumComment},
	{kinds.WorkflowTrigger, "workflow trigger: a member runs a workflow whose owner may (SEC-006)", (*apply).workflowCommand},
	{kinds.ApprovalGrant, "approval grant: the approver resumes a waiting run", (*apply).workflowCommand},
	{kinds.ApprovalDeny, "approval deny: the approver resumes it denied", (*apply).workflowCommand},
}

// rules is kindRules by kind.
var rules = func() map[int]func(*apply, context.Context) error {
	m := make(map[int]func(*apply, context.Context) error, len(kindRules))
	for _, r := range kindRules {
		m[r.kind] = r.rule
	}
	return m
}()

func checkEvent(s *Service, ev *nostr.Event, _, _ string, now time.Time) error {
	return eventcheck.Check(ev, now, s.sigs)
}

func checkProtected(_ *Service, ev *nostr.Event, authed, _ string, _ time.Time) error {
	return nip70.Check(ev, authed)
}

func checkVanish(_ *Service, ev *nostr.Event, authed, origin string, _ time.Time) error {
	return nip62.Check(ev, origin, authed)
}

// refuseBanned asks the ban check; a request to vanish (NIP-62), which a
// banned or timed-out key may still send (its data goes, its ban stays),
// asks only whether a newer request already covers it.
func refuseBanned(a *apply, ctx context.Context) error {
	if a.ev.Kind == kinds.Vanish {
		return a.tx.VanishedCheck(ctx, a.ev)
	}
	return a.tx.BansCheck(ctx, a.ev, a.authed)
}

func refuseRepeatedModeration(a *apply, ctx context.Context) error {
	if !kinds.Moderation(a.ev.Kind) {
		return nil
	}
	dup, err := a.tx.EventsExists(ctx, a.ev.ID)
	if err != nil {
		return err
	}
	if dup {
		return reject.Duplicatef("event %s is already stored", a.ev.ID)
	}
	return nil
}

// kindRule runs the kind's rule: an ephemeral event (never stored) only
// needs a channel it may write to.
func kindRule(a *apply, ctx context.Context) error {
	if kinds.Ephemeral(a.ev.Kind) {
		return a.ephemeral(ctx)
	}
	if rule, ok := rules[a.ev.Kind]; ok {
		return rule(a, ctx)
	}
	// Every other kind is stored by NIP-01's ranges (replaceable and
	// addressable: one per address), else as a message.
	_, inGroup := nip29.ChannelTag(a.ev.Tags)
	switch kinds.StorageOf(a.ev.Kind, inGroup) {
	case kinds.StoreReplaceable, kinds.StoreAddressable:
		return a.replaceable(ctx)
	}
	return a.message(ctx)
}

// run applies the inTx policies to one attempt.
func (a *apply) run(ctx context.Context) error {
	for _, p := range inTx {
		if err := p.run(a, ctx); err != nil {
			return err
		}
	}
	return nil
}
