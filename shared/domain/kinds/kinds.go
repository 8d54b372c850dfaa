// Package kinds is the relay's one table of event kinds: their numbers, who
// may send them, how they are stored, and the roles the write and read paths
// give them. Every other package asks here instead of writing a number.
//
// The table mirrors what spec/NIP-CL.md, spec/bridge-channel-window.md and
// design.md say the relay does with each kind; docs/reference.md's "Event
// kinds" table is checked against it both ways (reference_test.go).
package kinds

import "slices"

// Kinds a client may send.
const (
	Profile      = 0     // NIP-01 profile metadata
	Note         = 1     // NIP-01 short text note
	FollowList   = 3     // NIP-02 follow list
	Deletion     = 5     // NIP-09 deletion request
	Reaction     = 7     // NIP-25 reaction
	Vanish       = 62    // NIP-62 request to vanish
	Chat         = 9     // NIP-29 chat message
	ReplyOld     = 10    // NIP-29 threaded reply (deprecated)
	Thread       = 11    // thread / forum post
	ThreadReply  = 12    // NIP-29 threaded reply (deprecated)
	GiftWrap     = 1059  // NIP-59 gift wrap
	FileMetadata = 1063  // NIP-94 file metadata (a blob shared in a channel)
	PutUser      = 9000  // NIP-29 put user
	RemoveUser   = 9001  // NIP-29 remove user
	EditMetadata = 9002  // NIP-29 edit channel metadata
	DeleteEvent  = 9005  // NIP-29 delete event (moderation)
	CreateGroup  = 9007  // NIP-29 create channel
	DeleteGroup  = 9008  // NIP-29 delete channel
	CreateInvite = 9009  // NIP-29 create invite
	PinEvents    = 9010  // NIP-29 pin events: the group's ordered pin list
	JoinRequest  = 9021  // NIP-29 join request
	LeaveRequest = 9022  // NIP-29 leave request
	GroupsList   = 10009 // NIP-51 simple groups list
	Article      = 30023 // NIP-23 long-form article
	Edit         = 40003 // Buzz message edit
)

// Kinds and ranges NIP-29 clients send (issue 28): NIP-22 comments, and the
// user-owned lists they keep on their community relay, outside any group.
const (
	Comment     = 1111  // NIP-22 comment
	RelayList   = 10002 // NIP-65 relay list
	DMRelayList = 10050 // NIP-17 DM relay list
	// ListsFirst..ListsLast are NIP-51's standard lists (replaceable),
	// SetsFirst..SetsLast its sets (addressable).
	ListsFirst = 10000
	ListsLast  = 10030
	SetsFirst  = 30000
	SetsLast   = 30030
	// ReplaceableFirst and ReplaceableLast are NIP-01's replaceable range.
	ReplaceableFirst = 10000
	ReplaceableLast  = 19999
	// GroupStateFirst and GroupStateLast are NIP-29's relay-generated range
	// (39000-39009): never taken from a client, whatever the row.
	GroupStateFirst = 39000
	GroupStateLast  = 39009
)

// Kinds a client signs for authentication: AUTH (NIP-42) goes in an AUTH
// message and is refused as EVENT; HTTP auth (NIP-98) and Blossom's
// authorization (BUD-01) go in an Authorization header (sent as EVENT,
// NIP-98's is in the ephemeral range: delivered live, never stored).
const (
	Auth        = 22242
	BlossomAuth = 24242
	HTTPAuth    = 27235
)

// Kinds only the relay signs.
const (
	GroupMetadata = 39000 // NIP-29 channel metadata
	GroupAdmins   = 39001 // NIP-29 channel admins
	GroupMembers  = 39002 // NIP-29 channel members
	GroupRoles    = 39003 // NIP-29 channel roles
	// LiveKitParticipants is NIP-29's list of who is live in a group's
	// LiveKit room (d = the group), filed in the group and read under its
	// rule (no channel-state kind: no #d read of a hidden group's).
	LiveKitParticipants = 39004
	ThreadSummary       = 39005 // channel window thread summary overlay
	// GroupPins is NIP-29's pin list, the same kind as ThreadSummary: its
	// d is a group id, a summary's a thread root (64 hex). It is stored
	// (one per group, replaced by each 9010) and has the table row of
	// ThreadSummary, which only the relay signs; filter.ByChannel keeps it
	// out of #h.
	GroupPins     = 39005
	WindowBounds  = 39006 // channel window bounds overlay
	MemberAdded   = 44100 // membership notification: added
	MemberRemoved = 44101 // membership notification: removed
)

// Ranges.
const (
	// EphemeralFirst and EphemeralLast are NIP-01's ephemeral range.
	EphemeralFirst = 20000
	EphemeralLast  = 29999
	// AddressableFirst and AddressableLast are NIP-01's addressable range:
	// the newest event per (kind, pubkey, d tag) replaces the others.
	AddressableFirst = 30000
	AddressableLast  = 39999
	// ModerationFirst and ModerationLast bound the NIP-29 moderation and
	// membership kinds (9000-9030): they change channel state before they
	// are stored, so a repeat is caught before any effect.
	ModerationFirst = 9000
	ModerationLast  = 9030
	// Max is the largest kind number NIP-01 allows.
	Max = 65535
)

// Storage says how the relay keeps events of a kind.
type Storage string

const (
	StoreRegular     Storage = "regular"     // every event is kept
	StoreReplaceable Storage = "replaceable" // the newest per author is kept
	StoreAddressable Storage = "addressable" // the newest per author and d tag is kept
	StoreNever       Storage = "never"       // delivered or synthesized, never stored
	// StoreByRange: as NIP-01's ranges say (10000-19999 replaceable,
	// 30000-39999 addressable, any other regular).
	StoreByRange Storage = "by range"
)

// Kind is one row of the table: a kind number (or, for ranges, First..Last)
// and what the relay does with it.
type Kind struct {
	First, Last int
	Name        string
	// Accepted: a client may send it as EVENT.
	Accepted bool
	// RelayOnly: only the relay signs it; a client's is refused.
	RelayOnly bool
	Storage   Storage
	// ChannelState: a NIP-29 group-state kind (39000-39003); a #d on a
	// filter of only these kinds names channels (NIP-CL).
	ChannelState bool
	// Overlay: synthesized at query time by the relay, never stored.
	Overlay bool
	// Notice: a relay-signed membership notification to one p.
	Notice bool
	// Aux: reactions, edits and deletions in the window's aux closure (hop 1).
	Aux bool
	// Deletes: it deletes other events (NIP-09 5, NIP-29 9005); the aux
	// closure's hop 2.
	Deletes bool
	// Searchable: its content is indexed for NIP-50 search.
	Searchable bool
	// InChannel: it only exists inside a channel (needs an h tag).
	InChannel bool
	// RecipientOnly: only the keys its p tags name may read it.
	RecipientOnly bool
	// AnyAuthor: it is signed by a key other than the sender's (NIP-59's
	// throwaway key), so its pubkey need not be the authenticated one.
	AnyAuthor bool
	// Ephemeral: delivered live to subscribers who may read it, never stored.
	Ephemeral bool
	// Personal: a user's own list or profile, kept outside any group (an h
	// tag on it is ignored).
	Personal bool
	// GroupDefault: the row of every kind without a row of its own, sent
	// with a group's h tag (NIP-29: groups may accept any kind). Lookup
	// never answers with it; InGroup does.
	GroupDefault bool
	// AuthorOnly: only its author may read it (Buzz's AUTHOR_ONLY_KINDS):
	// nobody else learns that it exists.
	AuthorOnly bool
	// SharedGated: only its author may read it unless it carries exactly
	// one ["shared","true"] tag (Buzz's SHARED_GATED_KINDS).
	SharedGated bool
}

// table lists every kind the relay gives a meaning to, single kinds before
// the one range (a single kind inside it overrides it). Keep docs/reference.md's
// "Event kinds" table equal to it.
var table = []Kind{
	{First: Profile, Name: "profile metadata", Accepted: true, Storage: StoreReplaceable, Personal: true},
	{First: Note, Name: "short text note", Accepted: true, Storage: StoreRegular, Searchable: true},
	{First: FollowList, Name: "follow list", Accepted: true, Storage: StoreReplaceable, Personal: true},
	{First: Deletion, Name: "deletion", Accepted: true, Storage: StoreRegular, Aux: true, Deletes: true},
	{First: Reaction, Name: "reaction", Accepted: true, Storage: StoreRegular, Aux: true},
	{First: Chat, Name: "chat message", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: ReplyOld, Name: "threaded reply (deprecated)", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: Thread, Name: "thread post", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: ThreadReply, Name: "threaded reply (deprecated)", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: Vanish, Name: "request to vanish", Accepted: true, Storage: StoreRegular},
	{First: GiftWrap, Name: "gift wrap", Accepted: true, Storage: StoreRegular, RecipientOnly: true, AnyAuthor: true},
	{First: FileMetadata, Name: "file metadata", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: PutUser, Name: "put user", Accepted: true, Storage: StoreRegular},
	{First: RemoveUser, Name: "remove user", Accepted: true, Storage: StoreRegular},
	{First: EditMetadata, Name: "edit channel metadata", Accepted: true, Storage: StoreRegular},
	{First: DeleteEvent, Name: "delete event", Accepted: true, Storage: StoreRegular, Aux: true, Deletes: true},
	{First: CreateGroup, Name: "create channel", Accepted: true, Storage: StoreRegular},
	{First: DeleteGroup, Name: "delete channel", Accepted: true, Storage: StoreRegular},
	{First: CreateInvite, Name: "create invite", Accepted: true, Storage: StoreNever},
	{First: PinEvents, Name: "pin events", Accepted: true, Storage: StoreRegular},
	{First: JoinRequest, Name: "join request", Accepted: true, Storage: StoreRegular},
	{First: LeaveRequest, Name: "leave request", Accepted: true, Storage: StoreRegular},
	{First: GroupsList, Name: "simple groups list", Accepted: true, Storage: StoreReplaceable, Personal: true},
	{First: Auth, Name: "AUTH", Storage: StoreNever},
	{First: Article, Name: "long-form article", Accepted: true, Storage: StoreAddressable, Searchable: true},
	{First: GroupMetadata, Name: "channel metadata", RelayOnly: true, Storage: StoreAddressable, ChannelState: true},
	{First: GroupAdmins, Name: "channel admins", RelayOnly: true, Storage: StoreAddressable, ChannelState: true},
	{First: GroupMembers, Name: "channel members", RelayOnly: true, Storage: StoreAddressable, ChannelState: true},
	{First: GroupRoles, Name: "channel roles", RelayOnly: true, Storage: StoreAddressable, ChannelState: true},
	{First: LiveKitParticipants, Name: "livekit participants", RelayOnly: true, Storage: StoreAddressable},
	{First: ThreadSummary, Name: "thread summary", RelayOnly: true, Storage: StoreNever, Overlay: true},
	{First: WindowBounds, Name: "window bounds", RelayOnly: true, Storage: StoreNever, Overlay: true},
	{First: ThreadWindowBounds, Name: "thread window bounds", RelayOnly: true, Storage: StoreNever, Overlay: true},
	{First: Edit, Name: "message edit", Accepted: true, Storage: StoreRegular, Aux: true, Searchable: true},
	{First: MemberAdded, Name: "member added", RelayOnly: true, Storage: StoreRegular, Notice: true, RecipientOnly: true},
	{First: MemberRemoved, Name: "member removed", RelayOnly: true, Storage: StoreRegular, Notice: true, RecipientOnly: true},
	// Relay-made kinds of Buzz's relay (buzzkinds.go): refused from a client.
	{First: SystemMessage, Name: "system message", RelayOnly: true, Storage: StoreRegular, InChannel: true},
	{First: DMCreated, Name: "DM created", RelayOnly: true, Storage: StoreRegular},
	{First: IdentityArchived, Name: "identity archived", RelayOnly: true, Storage: StoreRegular},
	{First: IdentityUnarchived, Name: "identity unarchived", RelayOnly: true, Storage: StoreRegular},
	{First: ArchivedIdentities, Name: "archived identities", RelayOnly: true, Storage: StoreReplaceable},
	// Buzz's kinds (block/buzz crates/buzz-core/src/kind.rs), grouped by
	// read model: buzzkinds.go names them.
	// User-owned global state: stored outside any channel, read by anyone.
	{First: AgentProfile, Name: "agent profile", Accepted: true, Storage: StoreReplaceable},
	{First: ReadState, Name: "read state", Accepted: true, Storage: StoreAddressable},
	{First: AgentEngram, Name: "agent engram", Accepted: true, Storage: StoreAddressable},
	{First: Team, Name: "agent team", Accepted: true, Storage: StoreAddressable},
	{First: ManagedAgent, Name: "managed agent", Accepted: true, Storage: StoreAddressable},
	{First: UserStatus, Name: "user status", Accepted: true, Storage: StoreAddressable},
	// Author-only.
	{First: PrivateManagedAgent, Name: "private managed agent", Accepted: true, Storage: StoreAddressable, AuthorOnly: true},
	{First: EventReminder, Name: "event reminder", Accepted: true, Storage: StoreAddressable, AuthorOnly: true},
	{First: PushLease, Name: "push lease", Accepted: true, Storage: StoreAddressable, AuthorOnly: true},
	{First: PushSubscription, Name: "push subscription", Accepted: true, Storage: StoreAddressable, AuthorOnly: true},
	// Shared-gated.
	{First: Persona, Name: "agent persona", Accepted: true, Storage: StoreAddressable, SharedGated: true},
	{First: TeamCatalog, Name: "team catalog", Accepted: true, Storage: StoreAddressable, SharedGated: true},
	// #p-gated.
	{First: AgentObserverFrame, Name: "agent observer frame", Accepted: true, Storage: StoreNever, Ephemeral: true, RecipientOnly: true},
	{First: AgentTurnMetric, Name: "agent turn metric", Accepted: true, Storage: StoreRegular, RecipientOnly: true},
	{First: DMVisibility, Name: "DM visibility", RelayOnly: true, Storage: StoreAddressable, RecipientOnly: true},
	// Channel content.
	{First: StreamMessageV2, Name: "stream message v2", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: MessagePinned, Name: "pinned message", Accepted: true, Storage: StoreRegular, InChannel: true},
	{First: MessageBookmarked, Name: "bookmarked message", Accepted: true, Storage: StoreRegular, InChannel: true},
	{First: MessageScheduled, Name: "scheduled message", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: StreamReminder, Name: "stream reminder", Accepted: true, Storage: StoreRegular, InChannel: true},
	{First: MessageDiff, Name: "diff message", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: Canvas, Name: "canvas", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	// DM channels: acted on; open and add member stored in the DM.
	{First: DMOpen, Name: "DM open", Accepted: true, Storage: StoreRegular},
	{First: DMAddMember, Name: "DM add member", Accepted: true, Storage: StoreRegular},
	{First: DMHide, Name: "DM hide", Accepted: true, Storage: StoreNever},
	{First: JobRequest, Last: JobError, Name: "agent job", Accepted: true, Storage: StoreRegular, InChannel: true},
	{First: ForumPost, Name: "forum post", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	{First: ForumVote, Name: "forum vote", Accepted: true, Storage: StoreRegular, Aux: true},
	{First: ForumComment, Name: "forum comment", Accepted: true, Storage: StoreRegular, Searchable: true, InChannel: true},
	// Workflows (shared/service/workflow): definitions and commands filed
	// in the workflow's channel, and the relay's approval requests.
	{First: WorkflowDef, Name: "workflow definition", Accepted: true, Storage: StoreAddressable},
	{First: WorkflowApprovalRequested, Name: "workflow approval requested", RelayOnly: true, Storage: StoreRegular},
	{First: WorkflowTrigger, Name: "workflow trigger", Accepted: true, Storage: StoreRegular},
	{First: ApprovalGrant, Name: "approval grant", Accepted: true, Storage: StoreRegular},
	{First: ApprovalDeny, Name: "approval deny", Accepted: true, Storage: StoreRegular},
	// Moderation commands and reports: accepted, acted on, never stored
	// as events.
	{First: Report, Name: "report", Accepted: true, Storage: StoreNever},
	{First: ModerationBan, Name: "ban", Accepted: true, Storage: StoreNever},
	{First: ModerationUnban, Name: "unban or zap goal", Accepted: true, Storage: StoreRegular}, // stored only as a zap goal (shared/domain/nip75)
	{First: ModerationTimeout, Name: "timeout", Accepted: true, Storage: StoreNever},
	{First: ModerationUntimeout, Name: "untimeout", Accepted: true, Storage: StoreNever},
	{First: ModerationResolve, Name: "resolve report", Accepted: true, Storage: StoreNever},
	{First: ProductFeedback, Name: "product feedback", Accepted: true, Storage: StoreNever},
	// NIP-43 relay membership: commands acted on, relay-signed state.
	{First: RelayAddMember, Name: "add relay member", Accepted: true, Storage: StoreNever},
	{First: RelayRemoveMember, Name: "remove relay member", Accepted: true, Storage: StoreNever},
	{First: RelayChangeRole, Name: "change relay role", Accepted: true, Storage: StoreNever},
	{First: RelaySetProfile, Name: "set workspace profile", Accepted: true, Storage: StoreNever},
	{First: RelayMemberAdded, Name: "relay member added", RelayOnly: true, Storage: StoreRegular},
	{First: RelayMemberRemoved, Name: "relay member removed", RelayOnly: true, Storage: StoreRegular},
	{First: RelayMembershipList, Name: "relay membership list", RelayOnly: true, Storage: StoreReplaceable},
	{First: RelayJoinRequest, Name: "relay join request", Accepted: true, Storage: StoreNever},
	{First: RelayInvite, Name: "relay invite", RelayOnly: true, Storage: StoreNever},
	{First: RelayLeaveRequest, Name: "relay leave request", Accepted: true, Storage: StoreNever},
	// Ephemeral, delivered live under the channel's rules.
	{First: PresenceUpdate, Name: "presence update", Accepted: true, Storage: StoreNever, Ephemeral: true},
	{First: TypingIndicator, Name: "typing indicator", Accepted: true, Storage: StoreNever, Ephemeral: true},
	{First: Pairing, Name: "device pairing", Accepted: true, Storage: StoreNever, Ephemeral: true},
	{First: HuddleReaction, Name: "huddle reaction", Accepted: true, Storage: StoreNever, Ephemeral: true},
	{First: EphemeralFirst, Last: EphemeralLast, Name: "ephemeral", Accepted: true, Storage: StoreNever, Ephemeral: true},
	// Issue 28: NIP-22 comments, the user-owned kinds of NIP-29 clients, and
	// the default row of any other kind in a group.
	{First: Comment, Name: "comment", Accepted: true, Storage: StoreRegular, Searchable: true},
	{First: RelayList, Name: "relay list", Accepted: true, Storage: StoreReplaceable, Personal: true},
	{First: DMRelayList, Name: "DM relay list", Accepted: true, Storage: StoreReplaceable, Personal: true},
	{First: ListsFirst, Last: ListsLast, Name: "NIP-51 lists", Accepted: true, Storage: StoreReplaceable, Personal: true},
	{First: SetsFirst, Last: SetsLast, Name: "NIP-51 sets", Accepted: true, Storage: StoreAddressable, Personal: true},
	{First: 0, Last: Max, Name: "any other kind in a group", Accepted: true, Storage: StoreByRange, InChannel: true, GroupDefault: true},
}

// byKind indexes the single-kind rows; built once at start, read only.
var byKind = map[int]int{}

func init() {
	for i := range table {
		if table[i].Last == 0 {
			table[i].Last = table[i].First
		}
		if table[i].First == table[i].Last {
			byKind[table[i].First] = i
		}
	}
}

// Table returns a copy of every row, in table order.
func Table() []Kind { return slices.Clone(table) }

// Lookup returns the row of kind: its own row, else the range holding it.
// ok is false for a kind the relay gives no meaning to.
func Lookup(kind int) (Kind, bool) {
	if i, ok := byKind[kind]; ok {
		return table[i], true
	}
	// The narrowest range holding kind (jobs inside nothing, the ephemeral
	// range around its named kinds).
	best := -1
	for i, r := range table {
		if r.First < r.Last && !r.GroupDefault && r.First <= kind && kind <= r.Last && (best < 0 || r.Last-r.First < table[best].Last-table[best].First) {
			best = i
		}
	}
	if best >= 0 {
		return table[best], true
	}
	return Kind{}, false
}

// InGroup returns the row of kind sent with a group's h tag: its own row,
// else the group default row (any kind a client may send to a group, NIP-29),
// which never covers NIP-29's relay-generated range 39000-39009. ok is false
// for a kind a group cannot take.
func InGroup(kind int) (Kind, bool) {
	if k, ok := Lookup(kind); ok {
		return k, true
	}
	if kind < 0 || kind > Max || (kind >= GroupStateFirst && kind <= GroupStateLast) {
		return Kind{}, false
	}
	for _, r := range table {
		if r.GroupDefault {
			return r, true
		}
	}
	return Kind{}, false
}

// StorageOf is how the relay keeps kind sent with (inGroup) or without a
// group's h tag: its row's storage, a range row's resolved by NIP-01.
func StorageOf(kind int, inGroup bool) Storage {
	k, ok := Lookup(kind)
	if !ok && inGroup {
		k, ok = InGroup(kind)
	}
	if !ok {
		return StoreNever
	}
	if k.Storage != StoreByRange {
		return k.Storage
	}
	switch {
	case kind >= ReplaceableFirst && kind <= ReplaceableLast:
		return StoreReplaceable
	case InAddressableRange(kind):
		return StoreAddressable
	}
	return StoreRegular
}

// Personal reports whether kind is a user's own list or profile, kept
// outside any group.
func Personal(kind int) bool { return is(kind, func(k Kind) bool { return k.Personal }) }

func is(kind int, p func(Kind) bool) bool {
	k, ok := Lookup(kind)
	return ok && p(k)
}

// Accepted reports whether a client may send kind as EVENT.
func Accepted(kind int) bool { return is(kind, func(k Kind) bool { return k.Accepted }) }

// RelayOnly reports whether only the relay signs kind.
func RelayOnly(kind int) bool { return is(kind, func(k Kind) bool { return k.RelayOnly }) }

// ChannelState reports whether kind is a NIP-29 group-state kind (39000-39003).
func ChannelState(kind int) bool { return is(kind, func(k Kind) bool { return k.ChannelState }) }

// Overlay reports whether kind is a query-time relay overlay (39005, 39006).
func Overlay(kind int) bool { return is(kind, func(k Kind) bool { return k.Overlay }) }

// Aux reports whether kind is in the window's aux closure (hop 1).
func Aux(kind int) bool { return is(kind, func(k Kind) bool { return k.Aux }) }

// Deletes reports whether kind deletes other events (5, 9005).
func Deletes(kind int) bool { return is(kind, func(k Kind) bool { return k.Deletes }) }

// Searchable reports whether kind's content is indexed for NIP-50 search.
func Searchable(kind int) bool { return is(kind, func(k Kind) bool { return k.Searchable }) }

// InChannel reports whether kind exists only inside a channel (needs h).
func InChannel(kind int) bool { return is(kind, func(k Kind) bool { return k.InChannel }) }

// RecipientOnly reports whether only kind's p recipients may read it.
func RecipientOnly(kind int) bool { return is(kind, func(k Kind) bool { return k.RecipientOnly }) }

// AnyAuthor reports whether kind may be signed by a key other than the sender's.
func AnyAuthor(kind int) bool { return is(kind, func(k Kind) bool { return k.AnyAuthor }) }

// Ephemeral reports whether kind is delivered live and never stored (NIP-01
// 20000-29999, except AUTH).
func Ephemeral(kind int) bool { return is(kind, func(k Kind) bool { return k.Ephemeral }) }

// InAddressableRange reports whether kind is in NIP-01's addressable range
// (30000-39999), where the d tag is part of the event's address.
func InAddressableRange(kind int) bool { return kind >= AddressableFirst && kind <= AddressableLast }

// Moderation reports whether kind is in the NIP-29 moderation range (9000-9030).
func Moderation(kind int) bool { return kind >= ModerationFirst && kind <= ModerationLast }

// Where returns, ascending, the single kinds whose row satisfies p (ranges
// are left out).
func Where(p func(Kind) bool) []int {
	var out []int
	for _, k := range table {
		if k.First == k.Last && p(k) {
			out = append(out, k.First)
		}
	}
	slices.Sort(out)
	return out
}

// AuxKinds are the aux closure's hop-1 kinds (5, 7, 9005, 40003).
func AuxKinds() []int { return Where(func(k Kind) bool { return k.Aux }) }

// DeletionKinds are the kinds that delete (5, 9005): the aux closure's hop 2.
func DeletionKinds() []int { return Where(func(k Kind) bool { return k.Deletes }) }

// RecipientOnlyKinds are the kinds only their p recipients may read.
func RecipientOnlyKinds() []int { return Where(func(k Kind) bool { return k.RecipientOnly }) }

// ReplaceableKinds are the single kinds kept once per author (0, 3, 10002,
// 10009, 10050; ranges are left out).
func ReplaceableKinds() []int {
	return Where(func(k Kind) bool { return k.Storage == StoreReplaceable })
}

// NotRowKinds are the kinds that are never channel-window rows: the aux
// kinds first, then the relay-signed state, overlays and notices, each part
// ascending. The order is fixed because the events_window partial index
// (migrations/002_query.sql, 004_window_depth.sql) spells the same list.
func NotRowKinds() []int {
	return append(AuxKinds(), Where(func(k Kind) bool {
		return !k.Aux && (k.ChannelState || k.Overlay || k.Notice)
	})...)
}
