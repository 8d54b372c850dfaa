package kinds

// Buzz's kinds (block/buzz crates/buzz-core/src/kind.rs) that this relay
// stores and serves with Buzz's read models; their rows are in table.

// User-owned global state: stored outside any channel, readable by anyone.
const (
	AgentProfile = 10100 // agent metadata and owner reference (replaceable)
	ReadState    = 30078 // NIP-78 / NIP-RS per-client read state
	AgentEngram  = 30174 // NIP-AE agent memory record
	Team         = 30176 // NIP-AP agent team
	ManagedAgent = 30177 // NIP-AP managed agent (public projection)
	UserStatus   = 30315 // NIP-38 user status
)

// Workflow commands and the relay's workflow events (Buzz's workflow
// engine; shared/service/workflow runs them).
const (
	WorkflowDef               = 30620 // workflow definition, filed in its channel
	WorkflowApprovalRequested = 46010 // relay-signed: a run waits for an approval
	WorkflowTrigger           = 46020 // a member runs a workflow by hand
	ApprovalGrant             = 46030 // an approver grants a waiting approval
	ApprovalDeny              = 46031 // an approver denies it
)

// Author-only: readable by nobody but the author.
const (
	PrivateManagedAgent = 30179 // NIP-PMA owner-encrypted managed agent
	EventReminder       = 30300 // NIP-ER event reminder
	PushLease           = 30350 // NIP-PL encrypted push lease
	PushSubscription    = 30390 // NIP-9a push subscription (callback URL)
)

// Shared-gated: author-only unless the event carries ["shared","true"].
const (
	Persona     = 30175 // NIP-AP agent persona
	TeamCatalog = 30178 // NIP-AP team catalog projection
)

// #p-gated: readable only by the keys its p tags name.
const (
	AgentObserverFrame = 24200 // ephemeral owner-scoped agent telemetry
	AgentTurnMetric    = 44200 // NIP-AM per-turn metric, encrypted to the owner
	DMVisibility       = 30622 // NIP-DV per-viewer hidden DMs, relay-signed
)

// Channel content.
const (
	StreamMessageV2   = 40002 // stream message, a message like 9
	MessagePinned     = 40004 // a stream message pinned in a channel
	MessageBookmarked = 40005 // a stream message bookmarked by a user
	MessageScheduled  = 40006 // a stream message scheduled for later
	StreamReminder    = 40007 // a reminder on a message or a time
	MessageDiff       = 40008 // a unified diff message
	Canvas            = 40100 // a channel's shared document
	JobRequest        = 43001 // agent job requested (43001-43006: the job protocol)
	JobError          = 43006 // agent job failed
	ForumPost         = 45001 // forum thread root
	ForumVote         = 45002 // vote on a forum post or comment (aux)
	ForumComment      = 45003 // comment on a forum post (a reply)
)

// Buzz's DM channels: open (p tags name the other participants), add
// member (h the DM, p the new keys) and hide (h the DM). Buzz declares a
// 41001 "DM created" as well but its relay never publishes one: a new DM is
// announced by its 39000-39003 and a 44100 for each participant.
const (
	DMOpen      = 41010
	DMAddMember = 41011
	DMHide      = 41012
)

// Kinds Buzz's relay makes and no client may send (issues 51 and 52): its
// timeline system rows, the "DM created" it declares, and NIP-IA's
// identity-archive deltas and list. RelayOnly is the one predicate that
// refuses them from a client.
const (
	// SystemMessage is a relay-signed timeline row of a channel (h): its
	// content the JSON {"type":...,"actor":...} Buzz's relay writes for a
	// join, a leave, a removal, a creation, an archive, a deletion.
	SystemMessage = 40099
	// DMCreated is Buzz's "DM created"; declared, never published by Buzz's
	// relay or this one.
	DMCreated = 41001
	// IdentityArchived and IdentityUnarchived are NIP-IA's relay-signed
	// deltas, ArchivedIdentities its current list.
	IdentityArchived   = 8002
	IdentityUnarchived = 8003
	ArchivedIdentities = 13535
)

// ThreadWindowBounds is the relay-signed bounds overlay of Buzz's thread
// window (one per served thread window, never stored).
const ThreadWindowBounds = 39007

// Moderation: Buzz's commands from the community's moderators (executed,
// audited, never stored as events) and NIP-56 reports (queued for the
// operators, never stored as events).
const (
	Report              = 1984
	ModerationBan       = 9040 // p target, optional expiration and reason
	ModerationUnban     = 9041 // p target; with an amount tag NIP-75's zap goal instead (shared/domain/nip75)
	ModerationTimeout   = 9042 // p target until its expiration tag
	ModerationUntimeout = 9043
	ModerationResolve   = 9044 // report, status and action tags
)

// ProductFeedback is Buzz's product feedback: validated and kept for the
// community's operators outside the event store (the admin API's
// /feedback), never stored as an event, never delivered.
const ProductFeedback = 42000

// NIP-43 relay membership, as Buzz's relay runs it: commands from the
// community's owners and admins (executed, never stored), the relay-signed
// membership list and its deltas, and a member's leave request.
const (
	RelayAddMember      = 9030  // p target, optional role (member or admin)
	RelayRemoveMember   = 9031  // p target
	RelayChangeRole     = 9032  // p target, role; owners only
	RelaySetProfile     = 9033  // NIP-WP workspace profile: icon, thread_replies_in_channel
	RelayMemberAdded    = 8000  // relay-signed delta: ["-"], ["p", key]
	RelayMemberRemoved  = 8001  // relay-signed delta: ["-"], ["p", key]
	RelayMembershipList = 13534 // relay-signed list: ["-"], ["member", key, role] each
	RelayJoinRequest    = 28934 // a key joins with an invite's claim (NIP-70 ["-"]); never stored
	RelayInvite         = 28935 // relay-signed invite: ["-"], ["claim", code]; minted on REQ, never stored
	RelayLeaveRequest   = 28936 // a member leaves (NIP-70 ["-"]); never stored
)

// Ephemeral kinds Buzz names, delivered live under their channel's rules.
const (
	PresenceUpdate  = 20001
	TypingIndicator = 20002
	Pairing         = 24134 // NIP-AB device pairing
	HuddleReaction  = 24810
)

// SharedTag is the tag that opens a shared-gated kind to every reader:
// exactly ["shared","true"], once.
const SharedTag, SharedValue = "shared", "true"

// AuthorOnly reports whether only kind's author may read it (30179, 30300,
// 30350).
func AuthorOnly(kind int) bool { return is(kind, func(k Kind) bool { return k.AuthorOnly }) }

// SharedGated reports whether kind is author-only unless shared (30175,
// 30178).
func SharedGated(kind int) bool { return is(kind, func(k Kind) bool { return k.SharedGated }) }

// Gated reports whether some readers may not see an event of kind whatever
// its channel: recipient-only, author-only and shared-gated kinds. Another
// key's write naming such an event (a reaction, an edit, a deletion) is
// answered as if the event were not stored.
func Gated(kind int) bool {
	return is(kind, func(k Kind) bool { return k.RecipientOnly || k.AuthorOnly || k.SharedGated })
}

// AuthorOnlyKinds are the kinds only their author may read.
func AuthorOnlyKinds() []int { return Where(func(k Kind) bool { return k.AuthorOnly }) }

// SharedGatedKinds are the kinds author-only unless shared.
func SharedGatedKinds() []int { return Where(func(k Kind) bool { return k.SharedGated }) }

// Shared reports whether tags open a shared-gated event to every reader:
// exactly one tag named shared, and it is ["shared","true"]. Any other
// shape fails closed (ingest refuses it, so a stored event has none).
func Shared(tags [][]string) bool {
	n := 0
	for _, t := range tags {
		if len(t) == 0 || t[0] != SharedTag {
			continue
		}
		if len(t) != 2 || t[1] != SharedValue {
			return false
		}
		n++
	}
	return n == 1
}

// Engine is a group of Buzz kinds that need a server-side engine this relay
// does not run: they are refused with restricted: naming it.
type Engine struct {
	Kinds   []int
	Missing string // what the relay does not run, as the refusal names it
	Reason  string // docs/compatibility.md says why
}

// engines lists Buzz's engine kinds (kind.rs), refused.
var engines = []Engine{
	{Kinds: []int{46001, 46002, 46003, 46004, 46005, 46006, 46007, 46011, 46012},
		Missing: "workflow lifecycle events", Reason: "Buzz's executor publishes run and step lifecycle events; this relay keeps a run's trace in its row (GET /workflows/{id}/runs) and publishes none"},
	{Kinds: []int{48100, 48101, 48102, 48103, 48106},
		Missing: "a huddle audio service", Reason: "huddle lifecycle events come from Buzz's audio/video service"},
	{Kinds: []int{1617, 1618, 1619, 1621, 1630, 1631, 1632, 1633, 30617, 30618, 30621},
		Missing: "git hosting", Reason: "NIP-34 repositories, patches and their status need Buzz's git server to push and check against"},
}

// NeedsEngine returns what kind needs that the relay does not run, and
// whether it is one of Buzz's engine kinds.
func NeedsEngine(kind int) (string, bool) {
	for _, e := range engines {
		for _, k := range e.Kinds {
			if k == kind {
				return e.Missing, true
			}
		}
	}
	return "", false
}
