// Package routes is the relay's one HTTP route table: every route either
// HTTP function serves (the bridge's, NIP-11, NIP-86, health, the
// operator console, Buzz's invites, Blossom's media routes), each row with
// its methods, its path pattern, the function side that serves it, the use
// case it calls, the error table it answers with and the headers every
// answer of it carries (its CORS). Server.Serve routes a request by this
// table and nothing else; shared/wiring/lambdas deploys the same routes to
// API Gateway (a test holds the two together).
package routes

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/blossom"
	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	blossomhttp "github.com/buzzrelay/relay/shared/transport/blossom"
	"github.com/buzzrelay/relay/shared/transport/bridge"
	"github.com/buzzrelay/relay/shared/transport/console"
	"github.com/buzzrelay/relay/shared/transport/nip86"
)

// Side is which HTTP function serves a route: the writing one (ingest) or
// the reading one (query), as API Gateway routes them.
type Side uint8

const (
	Write Side = 1 << iota
	Read
	Both = Write | Read
)

// Errors names the error table a route answers with.
type Errors string

const (
	// BridgeFail is bridge.Bridge.Fail: status, {"error"} body,
	// Retry-After.
	BridgeFail Errors = "bridge.Fail"
	// NIP86Answer is nip86.Answer (its RPC error), bridge.Fail for what is
	// no refusal.
	NIP86Answer Errors = "nip86.Answer"
	// MediaFail is the media codec's fail: Blossom's status, X-Reason and
	// {"message"}.
	MediaFail Errors = "blossom fail"
	// ConsoleNotFound is the console's: 404 "not found" for a file it does
	// not have.
	ConsoleNotFound Errors = "console 404"
	// V1Fail is bridge.Bridge.V1Fail: bridge.Fail's status, Buzz's
	// {"error":{"code","request_id"}} body, Cache-Control: private, no-store.
	V1Fail Errors = "bridge.V1Fail"
)

// Handler answers one routed request; param is the path's {param} ("" for
// a path without one).
type Handler func(s *Server, ctx context.Context, r bridge.Request, param string) bridge.Response

// Route is one row of the table.
type Route struct {
	Methods []string
	// Path is the pattern: literal segments, and at most one {param} last,
	// one segment ({param}) or the rest of the path ({param...}). A
	// {param} never captures a name some row spells out (so GET /events is
	// no blob).
	Path string
	Side Side
	// ContentType, when set, is what the request's Content-Type must start
	// with (NIP-86 shares POST / with nothing else).
	ContentType string
	// UseCase is what the route calls; Errors the table its refusals and
	// failures are answered through.
	UseCase string
	Errors  Errors
	// Headers are added to every answer of the route: its CORS.
	Headers map[string]string
	// Needs is the part of the server the route needs; nil: none.
	Needs func(*Server) bool
	Serve Handler
}

// The header sets of the table's rows.
var (
	// BridgeCORS is every bridge answer's.
	BridgeCORS = map[string]string{
		"access-control-allow-origin":  "*",
		"access-control-allow-headers": "authorization, content-type",
		"access-control-allow-methods": "GET, POST, OPTIONS",
	}
	// MediaHeaders are every media answer's: BUD-01's cross-origin
	// headers, and X-Content-Type-Options: nosniff, so no browser reads a
	// media answer as a type it was not given.
	MediaHeaders = map[string]string{
		"x-content-type-options":        blossom.NoSniff,
		"access-control-allow-origin":   "*",
		"access-control-allow-headers":  "Authorization, *",
		"access-control-allow-methods":  "GET, HEAD, PUT, POST, DELETE, OPTIONS",
		"access-control-expose-headers": "*",
		"access-control-max-age":        "86400",
	}
	// ConsoleHeaders: the console sets its own (CSP and the rest), no CORS.
	ConsoleHeaders = map[string]string{}
	// AdminHeaders are every admin API answer's (Buzz's admin security
	// headers): never cached, never framed, no CORS (the desktop calls it
	// from its native side).
	AdminHeaders = map[string]string{
		"cache-control":           "no-store",
		"x-content-type-options":  "nosniff",
		"x-frame-options":         "DENY",
		"referrer-policy":         "no-referrer",
		"content-security-policy": "default-src 'none'; frame-ancestors 'none'",
	}
)

const (
	get, head, post, put, del, options = http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions
	patch                              = http.MethodPatch
)

func hasMedia(s *Server) bool   { return s.Media != nil }
func hasManage(s *Server) bool  { return s.Bridge.Manager != nil }
func hasInvites(s *Server) bool { return s.Bridge.Invites != nil }
func hasGIFs(s *Server) bool    { return s.Bridge.GIFs.On() }

// hasAdminMedia: the admin API and media both served.
func hasAdminMedia(s *Server) bool { return hasMedia(s) && hasManage(s) }

// feedbackAttachment is the admin API's attachment route: param is
// "{id}/{sha256}".
func feedbackAttachment(s *Server, ctx context.Context, r bridge.Request, p string) bridge.Response {
	return s.Bridge.AdminFeedbackAttachment(ctx, r, p, s.Media.Media)
}

func bridgeRoute(f func(*bridge.Bridge, context.Context, bridge.Request) bridge.Response) Handler {
	return func(s *Server, ctx context.Context, r bridge.Request, _ string) bridge.Response {
		return f(s.Bridge, ctx, r)
	}
}

// bridgeParam is a bridge handler of a path with a {param}.
func bridgeParam(f func(*bridge.Bridge, context.Context, bridge.Request, string) bridge.Response) Handler {
	return func(s *Server, ctx context.Context, r bridge.Request, p string) bridge.Response {
		return f(s.Bridge, ctx, r, p)
	}
}

// adminMember is the admin API's member route of action (ban, timeout):
// f is AdminMember (POST) or AdminMemberLift (DELETE).
func adminMember(f func(*bridge.Bridge, context.Context, bridge.Request, string, string) bridge.Response, action string) Handler {
	return func(s *Server, ctx context.Context, r bridge.Request, p string) bridge.Response {
		return f(s.Bridge, ctx, r, action, p)
	}
}

func mediaRoute(f func(*blossomhttp.Codec, context.Context, bridge.Request, string) bridge.Response) Handler {
	return func(s *Server, ctx context.Context, r bridge.Request, p string) bridge.Response {
		return f(s.Media, ctx, r, p)
	}
}

func serveConsole(_ *Server, _ context.Context, r bridge.Request, _ string) bridge.Response {
	status, headers, body := console.Serve(r.Path)
	return bridge.Response{Status: status, Headers: headers, Body: body}
}

func policyPage(which string) Handler {
	return func(s *Server, ctx context.Context, r bridge.Request, _ string) bridge.Response {
		return s.Bridge.PolicyPage(ctx, r, which)
	}
}

func landing(s *Server, ctx context.Context, r bridge.Request, code string) bridge.Response {
	return s.Bridge.Landing(ctx, r, code)
}

func liveKitToken(s *Server, ctx context.Context, r bridge.Request, group string) bridge.Response {
	return s.Bridge.LiveKitToken(ctx, r, group)
}

func hook(s *Server, ctx context.Context, r bridge.Request, id string) bridge.Response {
	return s.Bridge.Hook(ctx, r, id)
}

func workflowRead(s *Server, ctx context.Context, r bridge.Request, rest string) bridge.Response {
	return s.Bridge.Workflow(ctx, r, rest)
}

// Table is every HTTP route, first match first.
var Table = []Route{
	// The operator console (docs/console.md).
	{Methods: []string{get, head}, Path: "/admin", Side: Both, UseCase: "console.Serve (static files)", Errors: ConsoleNotFound, Headers: ConsoleHeaders, Serve: serveConsole},
	{Methods: []string{get, head}, Path: "/admin/{file...}", Side: Both, UseCase: "console.Serve (static files)", Errors: ConsoleNotFound, Headers: ConsoleHeaders, Serve: serveConsole},

	// The bridge: publish, read, NIP-11, NIP-86, health.
	{Methods: []string{post}, Path: "/events", Side: Write, UseCase: "relay.Publish", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).Events)},
	{Methods: []string{post}, Path: "/query", Side: Read, UseCase: "relay.Read, relay.ReadStateSnapshot", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).Query)},
	{Methods: []string{post}, Path: "/count", Side: Read, UseCase: "relay.Count", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).Count)},
	{Methods: []string{get}, Path: "/", Side: Both, UseCase: "NIP-11 (community.Registry or the directory)", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).Info)},
	{Methods: []string{post}, Path: "/", Side: Read, ContentType: nip86.ContentType, UseCase: "manage.Service.Serve (NIP-86)", Errors: NIP86Answer, Headers: BridgeCORS, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).Manage)},
	{Methods: []string{get}, Path: "/healthz", Side: Both, UseCase: "store.Ping, records.Status (deep=1)", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).Health)},

	// Buzz's invites (shared/service/invites).
	{Methods: []string{post}, Path: "/api/invites", Side: Write, UseCase: "invites.Service.Mint", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: bridgeRoute((*bridge.Bridge).MintInvite)},
	{Methods: []string{post}, Path: "/api/invites/claim", Side: Write, UseCase: "invites.Service.Claim", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: bridgeRoute((*bridge.Bridge).ClaimInvite)},
	{Methods: []string{post}, Path: "/api/invites/accept-policy", Side: Read, UseCase: "invites.Service.AcceptPolicy", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: bridgeRoute((*bridge.Bridge).AcceptPolicy)},
	{Methods: []string{get}, Path: "/api/join-policy", Side: Read, UseCase: "invites.Service.Policy", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: bridgeRoute((*bridge.Bridge).JoinPolicy)},
	{Methods: []string{get}, Path: "/api/join-policy/terms", Side: Read, UseCase: "invites.Service.Policy", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: policyPage("terms")},
	{Methods: []string{get}, Path: "/api/join-policy/privacy", Side: Read, UseCase: "invites.Service.Policy", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: policyPage("privacy")},
	{Methods: []string{get}, Path: "/invite/{code...}", Side: Read, UseCase: "a static page (community.Registry.Resolve)", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: landing},
	{Methods: []string{get}, Path: "/info", Side: Read, UseCase: "NIP-11 as JSON", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasInvites, Serve: bridgeRoute((*bridge.Bridge).InfoJSON)},

	// Buzz's read-state API (relay.Sidebar, ReadStateContexts,
	// ReadStateWrite; NIP-98, guard.ReadState): a Flotilla-style NIP-29
	// client may use it too (all_groups=1).
	{Methods: []string{get}, Path: "/buzz/v1/me/sidebar", Side: Read, UseCase: "relay.Sidebar", Errors: V1Fail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).Sidebar)},
	{Methods: []string{get}, Path: "/buzz/v1/me/read-state", Side: Read, UseCase: "relay.ReadStateContexts", Errors: V1Fail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).ReadStateContexts)},
	{Methods: []string{post}, Path: "/buzz/v1/me/read-state", Side: Read, UseCase: "relay.ReadStateWrite", Errors: V1Fail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).ReadStateWrite)},

	// Buzz desktop's moderation pane (bridge moderation.go): NIP-98 reads
	// for the community's operators.
	{Methods: []string{get}, Path: "/moderation/reports", Side: Read, UseCase: "manage.Service.Reports", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).ModerationReports)},
	{Methods: []string{get}, Path: "/moderation/audit", Side: Read, UseCase: "manage.Service.Audit", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).ModerationAudit)},
	{Methods: []string{get}, Path: "/moderation/restricted", Side: Read, UseCase: "manage.Service.Restricted", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).ModerationRestricted)},

	// Buzz desktop's admin console (bridge admin.go): the community's
	// operators, each change a NIP-86 call (manage.Service.Serve).
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/probe", Side: Read, UseCase: "manage.Service.Serve supportedmethods", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).AdminProbe)},
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/reports", Side: Read, UseCase: "manage.Service.Reports", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).AdminReports)},
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/reports/{id}", Side: Read, UseCase: "manage.Service.Report", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminReport)},
	{Methods: []string{post}, Path: bridge.AdminPrefix + "/reports/{id}/resolve", Side: Read, UseCase: "manage.Service.Serve resolvereport (banpubkey, timeoutpubkey, banevent)", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminResolve)},
	{Methods: []string{post}, Path: bridge.AdminPrefix + "/reports/{id}/reopen", Side: Read, UseCase: "manage.Service.Serve reopenreport", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminReopen)},
	{Methods: []string{post}, Path: bridge.AdminPrefix + "/reports/{id}/cancel", Side: Read, UseCase: "manage.Service.Report (no action to cancel: 409)", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminCancel)},
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/feedback", Side: Read, UseCase: "manage.Service.Feedback", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).AdminFeedbackList)},
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/feedback/{id}", Side: Read, UseCase: "manage.Service.FeedbackItem", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminFeedback)},
	{Methods: []string{patch}, Path: bridge.AdminPrefix + "/feedback/{id}", Side: Read, UseCase: "manage.Service.SetFeedbackStatus", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminFeedbackStatus)},
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/feedback/{id}/attachments/{sha256}", Side: Read, UseCase: "media.Service.Attachment (a bridge.Stream answer: the front streams the blob)", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasAdminMedia, Serve: feedbackAttachment},
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/operators", Side: Read, UseCase: "manage.Service.Serve listoperators", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).AdminOperators)},
	{Methods: []string{put}, Path: bridge.AdminPrefix + "/operators/{pubkey}", Side: Read, UseCase: "manage.Service.Serve addoperator", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminOperator)},
	{Methods: []string{del}, Path: bridge.AdminPrefix + "/operators/{pubkey}", Side: Read, UseCase: "manage.Service.Serve removeoperator", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminOperatorRemove)},
	{Methods: []string{get}, Path: bridge.AdminPrefix + "/members/restrictions", Side: Read, UseCase: "manage.Service.Restricted", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeRoute((*bridge.Bridge).AdminRestrictions)},
	{Methods: []string{post}, Path: bridge.AdminPrefix + "/members/{pubkey}/ban", Side: Read, UseCase: "manage.Service.Serve banpubkey", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: adminMember((*bridge.Bridge).AdminMember, "ban")},
	{Methods: []string{del}, Path: bridge.AdminPrefix + "/members/{pubkey}/ban", Side: Read, UseCase: "manage.Service.Serve unbanpubkey", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: adminMember((*bridge.Bridge).AdminMemberLift, "ban")},
	{Methods: []string{post}, Path: bridge.AdminPrefix + "/members/{pubkey}/timeout", Side: Read, UseCase: "manage.Service.Serve timeoutpubkey", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: adminMember((*bridge.Bridge).AdminMember, "timeout")},
	{Methods: []string{del}, Path: bridge.AdminPrefix + "/members/{pubkey}/timeout", Side: Read, UseCase: "manage.Service.Serve untimeoutpubkey", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: adminMember((*bridge.Bridge).AdminMemberLift, "timeout")},
	{Methods: []string{post}, Path: bridge.AdminPrefix + "/events/{id}/delete", Side: Read, UseCase: "manage.Service.Serve banevent", Errors: BridgeFail, Headers: AdminHeaders, Needs: hasManage, Serve: bridgeParam((*bridge.Bridge).AdminDeleteEvent)},

	// Buzz's GIF proxy (shared/service/gifs): only with a provider key.
	{Methods: []string{post}, Path: relayinfo.GIFSearchPath, Side: Read, UseCase: "gifs.Service.Search", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasGIFs, Serve: bridgeRoute((*bridge.Bridge).GIFSearch)},
	{Methods: []string{post}, Path: relayinfo.GIFSharePath, Side: Read, UseCase: "gifs.Service.Share", Errors: BridgeFail, Headers: BridgeCORS, Needs: hasGIFs, Serve: bridgeRoute((*bridge.Bridge).GIFShare)},

	// NIP-29 LiveKit (shared/service/livekit): discovery, and a group's
	// NIP-98 token endpoint.
	{Methods: []string{get}, Path: lk.DiscoveryPath, Side: Read, UseCase: "livekit.Service.On", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).LiveKitDiscovery)},
	{Methods: []string{get, post}, Path: lk.TokenPathPrefix + "{group}", Side: Read, UseCase: "livekit.Service.Token", Errors: BridgeFail, Headers: BridgeCORS, Serve: liveKitToken},
	{Methods: []string{post}, Path: lk.WebhookPath, Side: Write, UseCase: "livekit.Service.Webhook", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).LiveKitWebhook)},

	// Buzz's workflows (shared/service/workflow): the webhook door, and
	// the runs and approvals of a workflow for its channel's members.
	{Methods: []string{post}, Path: "/hooks/{id}", Side: Write, UseCase: "workflow.Service.Hook", Errors: BridgeFail, Headers: BridgeCORS, Serve: hook},
	{Methods: []string{get}, Path: "/workflows/{rest...}", Side: Read, UseCase: "workflow.Service.Runs, Approvals", Errors: BridgeFail, Headers: BridgeCORS, Serve: workflowRead},

	// Media: Blossom (BUD-01/02/06) and Buzz's /media routes
	// (shared/service/media).
	{Methods: []string{put}, Path: "/upload", Side: Write, UseCase: "media.Service.Upload, Complete", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Upload)},
	{Methods: []string{head}, Path: "/upload", Side: Write, UseCase: "media.Service.Preflight", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Preflight)},
	{Methods: []string{options}, Path: "/upload", Side: Both, UseCase: "CORS preflight", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Options)},
	{Methods: []string{put}, Path: "/media/upload", Side: Write, UseCase: "media.Service.Upload, Complete", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Upload)},
	{Methods: []string{head}, Path: "/media/upload", Side: Write, UseCase: "media.Service.Preflight", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Preflight)},
	{Methods: []string{post}, Path: "/media/upload", Side: Write, UseCase: "media.Service.Presign", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Presign)},
	{Methods: []string{options}, Path: "/media/upload", Side: Both, UseCase: "CORS preflight", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Options)},
	{Methods: []string{get}, Path: "/list/{pubkey}", Side: Read, UseCase: "media.Service.List", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).List)},
	{Methods: []string{options}, Path: "/list/{pubkey}", Side: Both, UseCase: "CORS preflight", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Options)},
	{Methods: []string{get}, Path: "/media/{blob}", Side: Read, UseCase: "media.Service.Download", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Get)},
	{Methods: []string{head}, Path: "/media/{blob}", Side: Read, UseCase: "media.Service.Read", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Head)},
	{Methods: []string{del}, Path: "/media/{blob}", Side: Write, UseCase: "media.Service.Delete", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Delete)},
	{Methods: []string{options}, Path: "/media/{blob}", Side: Both, UseCase: "CORS preflight", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Options)},
	{Methods: []string{get}, Path: "/{blob}", Side: Read, UseCase: "media.Service.Download", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Get)},
	{Methods: []string{head}, Path: "/{blob}", Side: Read, UseCase: "media.Service.Read", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Head)},
	{Methods: []string{del}, Path: "/{blob}", Side: Write, UseCase: "media.Service.Delete", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Delete)},
	{Methods: []string{options}, Path: "/{blob}", Side: Both, UseCase: "CORS preflight", Errors: MediaFail, Headers: MediaHeaders, Needs: hasMedia, Serve: mediaRoute((*blossomhttp.Codec).Options)},
}

// Fallback answers what no row serves: a CORS preflight (OPTIONS) of any
// other path gets the bridge's 204, anything else the bridge's 404.
var Fallback = []Route{
	{Methods: []string{options}, Path: "*", Side: Both, UseCase: "CORS preflight", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).Preflight)},
	{Methods: []string{"*"}, Path: "*", Side: Both, UseCase: "none: 404", Errors: BridgeFail, Headers: BridgeCORS, Serve: bridgeRoute((*bridge.Bridge).NoRoute)},
}

// Server routes one HTTP function's requests by the table.
type Server struct {
	Bridge *bridge.Bridge
	// Media is the media routes' codec; nil: media off.
	Media *blossomhttp.Codec
	// Side is which routes this function serves.
	Side Side
}

// Serve answers r by the first row that serves it (Match), else by the
// fallback.
func (s *Server) Serve(ctx context.Context, r bridge.Request) bridge.Response {
	rt, param := s.Match(r)
	return withHeaders(rt.Serve(s, ctx, r, param), rt.Headers)
}

// Fail answers err through the bridge's table, with its CORS: an error
// before any route (a body the adapter could not decode).
func (s *Server) Fail(ctx context.Context, op string, err error) bridge.Response {
	return withHeaders(s.Bridge.Fail(ctx, op, err), BridgeCORS)
}

// Match is the row that serves r on this server and its path's {param}:
// the first of the table whose method, path and content type match, that
// this server's side serves and whose part is wired; else the fallback's.
// Trailing slashes are not part of the path.
func (s *Server) Match(r bridge.Request) (Route, string) {
	path := strings.TrimRight(r.Path, "/")
	if path == "" {
		path = "/"
	}
	for _, rt := range Table {
		if rt.Side&s.Side == 0 || !slices.Contains(rt.Methods, r.Method) ||
			(rt.Needs != nil && !rt.Needs(s)) ||
			(rt.ContentType != "" && !strings.HasPrefix(r.Headers["content-type"], rt.ContentType)) {
			continue
		}
		if param, ok := matchPath(rt.Path, path); ok {
			return rt, param
		}
	}
	if r.Method == http.MethodOptions {
		return Fallback[0], ""
	}
	return Fallback[1], ""
}

// matchPath matches path against pattern (Route.Path): each {param} is
// one segment (followed by literal segments or more params:
// /reports/{id}/resolve, /feedback/{id}/attachments/{sha256}) or, last,
// the rest of the path ({param...}); the params come back joined by "/".
func matchPath(pattern, path string) (string, bool) {
	if !strings.Contains(pattern, "{") {
		return "", path == pattern
	}
	want, got := strings.Split(pattern, "/"), strings.Split(path, "/")
	var params []string
	for i, seg := range want {
		name, isParam := strings.CutPrefix(seg, "{")
		switch {
		case isParam && strings.HasSuffix(name, "...}"):
			rest := ""
			if i < len(got) {
				rest = strings.Join(got[i:], "/")
			}
			if rest == "" {
				return "", false
			}
			return strings.Join(append(params, rest), "/"), true
		case i >= len(got):
			return "", false
		case isParam:
			if got[i] == "" || spelled[got[i]] {
				return "", false
			}
			params = append(params, got[i])
		case got[i] != seg:
			return "", false
		}
	}
	if len(got) != len(want) {
		return "", false
	}
	return strings.Join(params, "/"), true
}

// spelled is every name a row's pattern spells out as a segment: what a
// {param} never captures.
var spelled = func() map[string]bool {
	m := map[string]bool{}
	for _, rt := range Table {
		for _, seg := range strings.Split(strings.Trim(rt.Path, "/"), "/") {
			if seg != "" && !strings.HasPrefix(seg, "{") {
				m[seg] = true
			}
		}
	}
	return m
}()

// withHeaders adds h to resp's headers.
func withHeaders(resp bridge.Response, h map[string]string) bridge.Response {
	if resp.Headers == nil {
		resp.Headers = make(map[string]string, len(h))
	}
	for k, v := range h {
		resp.Headers[k] = v
	}
	return resp
}
