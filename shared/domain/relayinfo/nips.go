package relayinfo

import (
	"slices"

	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// Served is one NIP of supported_nips and the evidence that the relay
// serves it: the kinds of the kinds table (shared/domain/kinds; a range's
// first kind) it gives a meaning to, the WebSocket verbs
// (wsrelay.VerbNIPs), the HTTP routes ("METHOD path" of routes.Table), and
// the rules with none of those, named by the function that applies them.
// TestSupportedNIPsAreExactlyWhatIsServed (shared/transport/routes) holds
// it to the three tables both ways: every evidence exists, and every kind
// row, verb and route is evidence of a listed NIP or in NotListed.
type Served struct {
	NIP    int
	Kinds  []int
	Verbs  []string
	Routes []string
	Rules  []string
	// Conditional: listed only by a community that turns it on
	// (AdvertiseMembership), not by New.
	Conditional bool
}

// ServedNIPs is what supported_nips lists (New), with its evidence.
// NIP-29's live audio/video rooms (LiveKit: discovery, token endpoint,
// webhook, 39004) are part of NIP-29 (nips 29.md, "Live audio/video (AV)
// spaces"), no NIP number of their own.
var ServedNIPs = []Served{
	{NIP: 1, Kinds: []int{kinds.Profile, kinds.Note, kinds.EphemeralFirst}, Verbs: []string{"EVENT", "REQ", "CLOSE"}},
	{NIP: 9, Kinds: []int{kinds.Deletion}},
	{NIP: 10, Rules: []string{"nip29.ParseReply"}},
	{NIP: 11, Routes: []string{"GET /", "GET /info"}},
	{NIP: 22, Kinds: []int{kinds.Comment}},
	{NIP: 29, Kinds: []int{kinds.Chat, kinds.ReplyOld, kinds.ThreadReply,
		kinds.PutUser, kinds.RemoveUser, kinds.EditMetadata, kinds.DeleteEvent, kinds.CreateGroup, kinds.DeleteGroup,
		kinds.CreateInvite, kinds.PinEvents, kinds.JoinRequest, kinds.LeaveRequest,
		kinds.GroupMetadata, kinds.GroupAdmins, kinds.GroupMembers, kinds.GroupRoles, kinds.LiveKitParticipants,
		kinds.GroupPins, // 39005: NIP-29's pins; Buzz's thread summaries share the kind
		0},              // 0: the row of any other kind sent to a group
		Routes: []string{"GET " + LiveKitDiscoveryPath, "GET " + LiveKitDiscoveryPath + "/{group}", "POST " + LiveKitDiscoveryPath + "/{group}", "POST " + LiveKitWebhookPath}},
	{NIP: 40, Rules: []string{"nip40.Check"}},
	{NIP: 42, Kinds: []int{kinds.Auth}, Verbs: []string{"AUTH"}},
	{NIP: 43, Kinds: []int{kinds.RelayMemberAdded, kinds.RelayMemberRemoved, kinds.RelayMembershipList,
		kinds.RelayJoinRequest, kinds.RelayInvite, kinds.RelayLeaveRequest}, Conditional: true},
	{NIP: 45, Verbs: []string{"COUNT"}},
	{NIP: 50, Rules: []string{"filter.Searches"}},
	{NIP: 62, Kinds: []int{kinds.Vanish}},
	{NIP: 70, Rules: []string{"nip70.Check"}},
	{NIP: 77, Verbs: []string{"NEG-OPEN", "NEG-MSG", "NEG-CLOSE"}},
	{NIP: 86, Routes: []string{"POST /"}},
	{NIP: 98, Routes: []string{"POST /events", "POST /query", "POST /count", "POST /",
		"POST /api/invites", "POST /api/invites/claim", "GET " + LiveKitDiscoveryPath + "/{group}", "POST " + LiveKitDiscoveryPath + "/{group}"}},
}

// NotListed is what the relay serves that no number of supported_nips
// stands for, each with why: a kind row (its first kind) or a route.
var NotListed = []struct {
	Kinds  []int
	Routes []string
	Why    string
}{
	{Kinds: []int{kinds.FollowList, kinds.Reaction, kinds.Article, kinds.FileMetadata, kinds.GiftWrap, kinds.RelayList,
		kinds.DMRelayList, kinds.GroupsList, kinds.ListsFirst, kinds.SetsFirst},
		Why: "client formats (NIP-02, 25, 23, 94, 59, 65, 17, 51) stored and served as NIP-01 events, NIP-42 gating who reads a gift wrap: the NIPs ask nothing more of a relay"},
	{Kinds: []int{kinds.Thread}, Why: "NIP-7D threads: no NIP number"},
	{Kinds: []int{kinds.Report}, Why: "NIP-56 reports, taken for the operators' moderation queue: NIP-56 asks nothing of relays"},
	{Kinds: []int{kinds.WindowBounds, kinds.ThreadWindowBounds, kinds.Edit, kinds.MemberAdded, kinds.MemberRemoved,
		kinds.AgentProfile, kinds.ReadState, kinds.AgentEngram, kinds.Team, kinds.ManagedAgent, kinds.UserStatus, kinds.WorkflowDef,
		kinds.PrivateManagedAgent, kinds.EventReminder, kinds.PushLease, kinds.PushSubscription, kinds.Persona, kinds.TeamCatalog,
		kinds.AgentObserverFrame, kinds.AgentTurnMetric, kinds.DMVisibility, kinds.StreamMessageV2, kinds.MessagePinned,
		kinds.MessageBookmarked, kinds.MessageScheduled, kinds.StreamReminder, kinds.MessageDiff, kinds.Canvas,
		kinds.DMOpen, kinds.DMAddMember, kinds.DMHide, kinds.JobRequest, kinds.ForumPost, kinds.ForumVote, kinds.ForumComment,
		kinds.ModerationBan, kinds.ModerationUnban, kinds.ModerationTimeout, kinds.ModerationUntimeout, kinds.ModerationResolve,
		kinds.ProductFeedback,
		kinds.RelayAddMember, kinds.RelayRemoveMember, kinds.RelayChangeRole, kinds.RelaySetProfile,
		kinds.PresenceUpdate, kinds.TypingIndicator, kinds.Pairing, kinds.HuddleReaction,
		kinds.SystemMessage, kinds.DMCreated, kinds.IdentityArchived, kinds.IdentityUnarchived, kinds.ArchivedIdentities},
		Why: "Buzz's kinds (block/buzz, NIP-CW and its extensions, NIP-IA's relay-made kinds refused from clients): no NIP number"},
	{Routes: []string{"GET /buzz/v1/me/sidebar", "GET /buzz/v1/me/read-state", "POST /buzz/v1/me/read-state"},
		Why: "Buzz's read-state API (/buzz/v1): no NIP number"},
	{Routes: []string{"GET /admin", "HEAD /admin", "GET /admin/{file...}", "HEAD /admin/{file...}"}, Why: "the operator console"},
	{Routes: []string{"GET /healthz"}, Why: "health check"},
	{Routes: []string{"POST /api/invites", "POST /api/invites/claim", "POST /api/invites/accept-policy", "GET /api/join-policy",
		"GET /api/join-policy/terms", "GET /api/join-policy/privacy", "GET /invite/{code...}"}, Why: "Buzz's invites: no NIP number"},
	{Routes: []string{"POST " + GIFSearchPath, "POST " + GIFSharePath}, Why: "Buzz's GIF proxy (buzz-gif in supported_extensions): no NIP number"},
	{Routes: []string{"GET /moderation/reports", "GET /moderation/audit", "GET /moderation/restricted"},
		Why: "Buzz desktop's moderation pane (NIP-98 reads for the operators): no NIP number"},
	{Routes: []string{"GET /api/admin/v1/probe", "GET /api/admin/v1/reports", "GET /api/admin/v1/reports/{id}",
		"POST /api/admin/v1/reports/{id}/resolve", "POST /api/admin/v1/reports/{id}/reopen",
		"POST /api/admin/v1/reports/{id}/cancel", "GET /api/admin/v1/feedback", "GET /api/admin/v1/feedback/{id}",
		"PATCH /api/admin/v1/feedback/{id}", "GET /api/admin/v1/feedback/{id}/attachments/{sha256}",
		"GET /api/admin/v1/operators", "PUT /api/admin/v1/operators/{pubkey}",
		"DELETE /api/admin/v1/operators/{pubkey}", "GET /api/admin/v1/members/restrictions",
		"POST /api/admin/v1/members/{pubkey}/ban", "DELETE /api/admin/v1/members/{pubkey}/ban",
		"POST /api/admin/v1/members/{pubkey}/timeout", "DELETE /api/admin/v1/members/{pubkey}/timeout",
		"POST /api/admin/v1/events/{id}/delete"},
		Why: "Buzz desktop's admin console (NIP-86's use cases behind NIP-98): no NIP number"},
	{Routes: []string{"PUT /upload", "HEAD /upload", "OPTIONS /upload", "PUT /media/upload", "HEAD /media/upload", "POST /media/upload",
		"OPTIONS /media/upload", "GET /list/{pubkey}", "OPTIONS /list/{pubkey}", "GET /media/{blob}", "HEAD /media/{blob}",
		"DELETE /media/{blob}", "OPTIONS /media/{blob}", "GET /{blob}", "HEAD /{blob}", "DELETE /{blob}", "OPTIONS /{blob}"},
		Why: "Blossom (BUD-01, 02, 06) and Buzz's /media routes: no NIP number"},
	{Kinds: []int{kinds.WorkflowApprovalRequested, kinds.WorkflowTrigger, kinds.ApprovalGrant, kinds.ApprovalDeny},
		Routes: []string{"POST /hooks/{id}", "GET /workflows/{rest...}"}, Why: "Buzz's workflows (docs/workflows.md): no NIP number"},
}

// NIP-29 LiveKit's paths (nips 29.md): the discovery answer (a group's
// token endpoint is under it) and where LiveKit posts its webhooks. They
// are defined here, where ServedNIPs names them; shared/domain/livekit
// re-exports them.
const (
	LiveKitDiscoveryPath = "/.well-known/nip29/livekit"
	LiveKitWebhookPath   = "/livekit/webhook"
)

// supportedNIPs is the NIPs of ServedNIPs every community lists, in order.
func supportedNIPs() []int {
	var out []int
	for _, s := range ServedNIPs {
		if !s.Conditional {
			out = append(out, s.NIP)
		}
	}
	slices.Sort(out)
	return out
}
