package bridge

import (
	"bytes"
	"context"
	"encoding/json"

	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/manage"
)

// Buzz desktop's admin console (block/buzz desktop/src-tauri/src/commands/
// admin: routes.rs, mod.rs; the relay's api/admin): /api/admin/v1/*, NIP-98
// signed by the app's key, camelCase JSON. Here the console administers the
// community at the request's host, for its operators: every route passes
// manage.Service's door (guard.Manage), and every change is a NIP-86 call
// (manage.Service.Serve: one rule, two doors). A request without a token is
// answered 401 with WWW-Authenticate: Nostr (the app's probe reads it); a
// key that is no operator 403.

// AdminPrefix is where the admin API is served.
const AdminPrefix = "/api/admin/v1"

// adminFail is Fail, with the 401 challenge the app's probe looks for.
func (b *Bridge) adminFail(ctx context.Context, op string, err error) Response {
	resp := b.Fail(ctx, "admin "+op, err)
	if resp.Status == http.StatusUnauthorized {
		resp.Headers["www-authenticate"] = "Nostr"
	}
	return resp
}

// adminCall runs one NIP-86 method for the admin API as pubkey.
func (b *Bridge) adminCall(ctx context.Context, c *community.Community, pubkey, method string, params ...any) (any, error) {
	call := manage.Call{Method: method}
	for _, p := range params {
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		call.Params = append(call.Params, raw)
	}
	return b.Manager.Serve(ctx, c, pubkey, call)
}

// adminProbe is GET /api/admin/v1/probe: the mode and the caller's role.
type adminProbe struct {
	Status   string `json:"status"`
	AuthMode string `json:"authMode"`
	Role     string `json:"role"`
	Source   string `json:"source"`
	CanAct   bool   `json:"canAct"`
	CanStaff bool   `json:"canStaff"`
}

// AdminProbe is GET /api/admin/v1/probe.
func (b *Bridge) AdminProbe(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err == nil {
		_, err = b.adminCall(ctx, c, pubkey, "supportedmethods")
	}
	if err != nil {
		return b.adminFail(ctx, "probe", err)
	}
	return JSON(http.StatusOK, adminProbe{Status: "ok", AuthMode: "nip98", Role: "operator", Source: "db", CanAct: true, CanStaff: true})
}

// adminReport is Buzz's AdminReport (camelCase).
type adminReport struct {
	ID            string  `json:"id"`
	CommunityID   string  `json:"communityId"`
	CommunityHost string  `json:"communityHost"`
	ReportEventID string  `json:"reportEventId"`
	Reporter      string  `json:"reporterPubkey"`
	TargetKind    string  `json:"targetKind"`
	Target        string  `json:"target"`
	ChannelID     *string `json:"channelId"`
	ReportType    string  `json:"reportType"`
	Note          *string `json:"note"`
	Status        string  `json:"status"`
	ResolvedBy    *string `json:"resolvedBy"`
	ResolvedAt    *string `json:"resolvedAt"`
	ActionID      *string `json:"actionId"`
	CreatedAt     string  `json:"createdAt"`
}

func toAdminReport(c *community.Community, host string, rep records.Report) adminReport {
	kind, target := reportTarget(rep)
	return adminReport{ID: AdminID(rep.ID), CommunityID: CommunityUUID(c.ID), CommunityHost: host, ReportEventID: rep.ID,
		Reporter: rep.Reporter, TargetKind: kind, Target: target, ReportType: rep.Type, Note: optional(rep.Content),
		Status: rep.ShownStatus(), ResolvedBy: optional(rep.ResolvedBy), ResolvedAt: optionalTime(rep.ResolvedAt),
		CreatedAt: timestamp(rep.CreatedAt)}
}

// AdminPage and MaxAdminPage bound GET /api/admin/v1/reports (Buzz: 50
// when no limit is asked, 1-200 else 400).
const (
	AdminPage    = 50
	MaxAdminPage = 200
)

// reportQuery are the parameters GET /api/admin/v1/reports takes; any
// other is refused, as Buzz's relay refuses it.
var reportQuery = []string{"communityId", "status", "scope", "reportType", "targetKind", "after", "before", "limit"}

// AdminReports is GET /api/admin/v1/reports[?status=&scope=all&limit=
// &communityId=&reportType=&targetKind=&after=&before=]: newest first,
// created in [after, before) (RFC 3339). With no status and no scope=all,
// Buzz's default: the escalated reports only. communityId naming another
// community (or none) lists nothing, as Buzz's deployment-wide filter does.
func (b *Bridge) AdminReports(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.adminFail(ctx, "reports", err)
	}
	page, err := adminReportPage(r.Query)
	if err != nil {
		return b.adminFail(ctx, "reports", err)
	}
	rows, err := b.Manager.Reports(ctx, c, pubkey, page)
	if err != nil {
		return b.adminFail(ctx, "reports", err)
	}
	out := []adminReport{}
	if id, ok := r.Query["communityId"]; ok && adminPrefix(id) != adminPrefix(CommunityUUID(c.ID)) {
		return JSON(http.StatusOK, out)
	}
	host := community.NormalizeHost(r.Host)
	for _, rep := range rows {
		out = append(out, toAdminReport(c, host, rep))
	}
	return JSON(http.StatusOK, out)
}

// adminReportPage reads GET /api/admin/v1/reports's query as Buzz's relay
// reads it: limit 1-MaxAdminPage (AdminPage when absent), scope all,
// communityId a UUID, after and before RFC 3339 times.
func adminReportPage(q map[string]string) (manage.ReportFilter, error) {
	for k := range q {
		if !slices.Contains(reportQuery, k) {
			return manage.ReportFilter{}, reject.Invalidf("unknown parameter %q", k)
		}
	}
	p := manage.ReportFilter{Limit: AdminPage, Status: q["status"], Type: q["reportType"], Target: q["targetKind"]}
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAdminPage {
			return p, reject.Invalidf("limit must be between 1 and %d", MaxAdminPage)
		}
		p.Limit = n
	}
	if v, ok := q["scope"]; ok && v != "all" {
		return p, reject.Invalidf("scope must be all")
	}
	if v, ok := q["communityId"]; ok && adminPrefix(v) == "" {
		return p, reject.Invalidf("communityId must be a UUID")
	}
	if _, ok := q["status"]; !ok && q["scope"] != "all" {
		p.Status = records.StatusEscalated
	}
	var err error
	if p.Since, err = adminTime(q, "after"); err == nil {
		p.Until, err = adminTime(q, "before")
	}
	return p, err
}

// adminTime is the query's RFC 3339 time name as the first whole second at
// or after it (created_at >= after, created_at < before); 0 when absent.
func adminTime(q map[string]string, name string) (int64, error) {
	v, ok := q[name]
	if !ok {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || t.Unix() < 1 {
		return 0, reject.Invalidf("%s must be an RFC 3339 time", name)
	}
	if t.Nanosecond() > 0 {
		return t.Unix() + 1, nil
	}
	return t.Unix(), nil
}

// adminReportDetail is GET /api/admin/v1/reports/{id}: the report, the
// event that filed it, and no enforcement action (this relay applies a
// resolution's action through its own NIP-86 call).
type adminReportDetail struct {
	Report       adminReport     `json:"report"`
	ReportEvent  json.RawMessage `json:"reportEvent"`
	ActiveAction *struct{}       `json:"activeAction"`
}

// AdminReport is GET /api/admin/v1/reports/{id}.
func (b *Bridge) AdminReport(ctx context.Context, r Request, id string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.adminFail(ctx, "report", err)
	}
	rep, err := b.Manager.Report(ctx, c, pubkey, adminPrefix(id))
	if err != nil {
		return b.adminFail(ctx, "report", err)
	}
	return JSON(http.StatusOK, adminReportDetail{Report: toAdminReport(c, community.NormalizeHost(r.Host), rep), ReportEvent: json.RawMessage(rep.Raw)})
}

// resolveBody is POST /api/admin/v1/reports/{id}/resolve's body.
type resolveBody struct {
	Action         string  `json:"action"`
	RequestID      *string `json:"requestId"`
	ExpirationSecs *int64  `json:"expirationSecs"`
	Reason         *string `json:"reason"`
}

// AdminResolve is POST /api/admin/v1/reports/{id}/resolve: NIP-86
// resolvereport (the 9044's rule), the action's own NIP-86 call first for
// ban, timeout and delete (banpubkey, timeoutpubkey, banevent). kick, which
// names a channel membership, is refused.
func (b *Bridge) AdminResolve(ctx context.Context, r Request, id string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.adminFail(ctx, "resolve", err)
	}
	rep, err := b.Manager.Report(ctx, c, pubkey, adminPrefix(id)) // the door first, as Buzz authorizes before it parses
	if err != nil {
		return b.adminFail(ctx, "resolve", err)
	}
	var body resolveBody
	if err := strictJSON(r.Body, &body); err != nil {
		return b.adminFail(ctx, "resolve", err)
	}
	reason := ""
	if body.Reason != nil {
		reason = *body.Reason
	}
	status := records.StatusResolved
	switch body.Action {
	case "dismiss":
		status = records.StatusDismissed
	case "escalate":
	case "ban":
		_, err = b.adminCall(ctx, c, pubkey, "banpubkey", rep.TargetPubkey, reason)
	case "timeout":
		if body.ExpirationSecs == nil || *body.ExpirationSecs <= 0 {
			return b.adminFail(ctx, "resolve", reject.Invalidf("expirationSecs is required for timeout"))
		}
		_, err = b.adminCall(ctx, c, pubkey, "timeoutpubkey", rep.TargetPubkey, time.Now().Unix()+*body.ExpirationSecs, reason)
	case "delete":
		if rep.TargetEvent == "" {
			return b.adminFail(ctx, "resolve", reject.Invalidf("delete needs a report naming an event"))
		}
		_, err = b.adminCall(ctx, c, pubkey, "banevent", rep.TargetEvent, reason)
	case "kick":
		err = reject.Invalidf("kick is not served here: remove the member from the channel with a NIP-29 9001")
	default:
		err = reject.Invalidf("action must be delete, kick, ban, timeout, dismiss or escalate")
	}
	if err == nil {
		_, err = b.adminCall(ctx, c, pubkey, "resolvereport", rep.ID, status, body.Action)
	}
	if err != nil {
		return b.adminFail(ctx, "resolve", err)
	}
	shown := status
	if body.Action == "escalate" {
		shown = records.StatusEscalated
	}
	return JSON(http.StatusOK, map[string]any{"status": shown, "activeAction": nil})
}

// AdminReopen is POST /api/admin/v1/reports/{id}/reopen, body
// {"requestId": UUID, "reason"?}: NIP-86 reopenreport, a closed report
// (resolved, dismissed, escalated) open again, answered {"status":
// "open"}; a retry with the same requestId answers the same; an open
// report 409.
func (b *Bridge) AdminReopen(ctx context.Context, r Request, id string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.adminFail(ctx, "reopen", err)
	}
	rep, err := b.Manager.Report(ctx, c, pubkey, adminPrefix(id)) // the door first
	if err != nil {
		return b.adminFail(ctx, "reopen", err)
	}
	var body struct {
		RequestID string  `json:"requestId"`
		Reason    *string `json:"reason"`
	}
	if err := strictJSON(r.Body, &body); err != nil {
		return b.adminFail(ctx, "reopen", err)
	}
	if adminPrefix(body.RequestID) == "" || len(body.RequestID) != 36 {
		return b.adminFail(ctx, "reopen", reject.Invalidf("requestId must be a UUID"))
	}
	if _, err := b.adminCall(ctx, c, pubkey, "reopenreport", rep.ID, strings.ToLower(body.RequestID)); err != nil {
		return b.adminFail(ctx, "reopen", err)
	}
	return JSON(http.StatusOK, map[string]string{"status": records.StatusOpen})
}

// AdminCancel is POST /api/admin/v1/reports/{id}/cancel, body {"actionId":
// UUID}: Buzz cancels an enforcement action that failed before it changed
// anything. This relay applies a resolution's action within its NIP-86
// call (AdminResolve), so no action is ever left failed: a well-formed
// cancel of the community's report answers 409, as Buzz answers an action
// that is not cancellable.
func (b *Bridge) AdminCancel(ctx context.Context, r Request, id string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.adminFail(ctx, "cancel", err)
	}
	if _, err := b.Manager.Report(ctx, c, pubkey, adminPrefix(id)); err != nil {
		return b.adminFail(ctx, "cancel", err)
	}
	var body struct {
		ActionID string `json:"actionId"`
	}
	if err := strictJSON(r.Body, &body); err != nil {
		return b.adminFail(ctx, "cancel", err)
	}
	if adminPrefix(body.ActionID) == "" || len(body.ActionID) != 36 {
		return b.adminFail(ctx, "cancel", reject.Invalidf("actionId must be a UUID"))
	}
	return b.adminFail(ctx, "cancel", errNotCancellable)
}

// errNotCancellable answers every cancel (AdminCancel).
var errNotCancellable = because(manage.ErrReportState,
	reject.Invalidf("action is not cancellable: this relay applies an action when the report is resolved, and none failed"))

// adminFeedback is one feedback row (Buzz's FeedbackSummary, and its
// detail with the body and tags).
type adminFeedback struct {
	ID            string          `json:"id"`
	CommunityID   string          `json:"communityId"`
	CommunityHost string          `json:"communityHost"`
	EventID       string          `json:"eventId"`
	Submitter     string          `json:"submitterPubkey"`
	Category      *string         `json:"category"`
	BodySummary   string          `json:"bodySummary,omitempty"`
	Body          string          `json:"body,omitempty"`
	Tags          json.RawMessage `json:"tags,omitempty"`
	Status        string          `json:"status"`
	ReceivedAt    string          `json:"receivedAt"`
	CreatedAt     string          `json:"createdAt"`
}

// SummaryRunes is how much of a feedback body the list shows.
const SummaryRunes = 280

func toAdminFeedback(c *community.Community, host string, f records.Feedback, detail bool) adminFeedback {
	a := adminFeedback{ID: AdminID(f.EventID), CommunityID: CommunityUUID(c.ID), CommunityHost: host, EventID: f.EventID,
		Submitter: f.Submitter, Category: optional(f.Category), Status: f.Status, ReceivedAt: timestamp(f.ReceivedAt),
		CreatedAt: timestamp(f.EventCreatedAt)}
	if detail {
		a.Body, a.Tags = f.Body, json.RawMessage(f.Tags)
	} else if rs := []rune(f.Body); len(rs) > SummaryRunes {
		a.BodySummary = string(rs[:SummaryRunes]) + "…"
	} else {
		a.BodySummary = f.Body
	}
	return a
}

// AdminFeedbackList is GET /api/admin/v1/feedback: kind 42000 submissions,
// newest first.
func (b *Bridge) AdminFeedbackList(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.adminFail(ctx, "feedback", err)
	}
	rows, err := b.Manager.Feedback(ctx, c, pubkey)
	if err != nil {
		return b.adminFail(ctx, "feedback", err)
	}
	out := make([]adminFeedback, len(rows))
	for i, f := range rows {
		out[i] = toAdminFeedback(c, community.NormalizeHost(r.Host), f, false)
	}
	return JSON(http.StatusOK, out)
}

// AdminFeedbackStatus is PATCH /api/admin/v1/feedback/{id}, body
// {"status": new|reviewed|archived}.
func (b *Bridge) AdminFeedbackStatus(ctx context.Context, r Request, id string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err == nil {
		_, err = b.adminCall(ctx, c, pubkey, "supportedmethods") // the door before the body
	}
	if err != nil {
		return b.adminFail(ctx, "feedback", err)
	}
	var body struct {
		Status string `json:"status"`
	}
	if err := strictJSON(r.Body, &body); err != nil {
		return b.adminFail(ctx, "feedback", err)
	}
	f, err := b.Manager.SetFeedbackStatus(ctx, c, pubkey, adminPrefix(id), body.Status)
	if err != nil {
		return b.adminFail(ctx, "feedback", err)
	}
	return JSON(http.StatusOK, map[string]string{"status": f.Status})
}

// AdminFeedback is GET /api/admin/v1/feedback/{id}: the submission whole.
func (b *Bridge) AdminFeedback(ctx context.Context, r Request, id string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.adminFail(ctx, "feedback", err)
	}
	f, err := b.Manager.FeedbackItem(ctx, c, pubkey, adminPrefix(id))
	if err != nil {
		return b.adminFail(ctx, "feedback", err)
	}
	return JSON(http.StatusOK, toAdminFeedback(c, community.NormalizeHost(r.Host), f, true))
}

// adminOperator is Buzz's OperatorEntry.
type adminOperator struct {
	Pubkey        string   `json:"pubkey"`
	EffectiveRole string   `json:"effectiveRole"`
	Sources       []string `json:"sources"`
}

// AdminOperators is GET /api/admin/v1/operators: NIP-86 listoperators.
func (b *Bridge) AdminOperators(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.adminFail(ctx, "operators", err)
	}
	res, err := b.adminCall(ctx, c, pubkey, "listoperators")
	if err != nil {
		return b.adminFail(ctx, "operators", err)
	}
	ops, _ := res.([]string)
	out := make([]adminOperator, len(ops))
	for i, op := range ops {
		out[i] = adminOperator{Pubkey: op, EffectiveRole: "operator", Sources: []string{"db"}}
	}
	return JSON(http.StatusOK, out)
}

// AdminOperatorRemove is DELETE /api/admin/v1/operators/{pubkey}: NIP-86
// removeoperator.
func (b *Bridge) AdminOperatorRemove(ctx context.Context, r Request, target string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err == nil && !eventcheck.LowerHex(target, 64) {
		err = reject.Invalidf("pubkey must be 64 lowercase hex characters")
	}
	if err == nil {
		_, err = b.adminCall(ctx, c, pubkey, "removeoperator", target)
	}
	if err != nil {
		return b.adminFail(ctx, "operator", err)
	}
	return JSON(http.StatusOK, map[string]string{"deleted": target})
}

// AdminOperator is PUT /api/admin/v1/operators/{pubkey}: NIP-86
// addoperator. Its body {"role"} must say operator (this relay has no
// moderator role apart from its operators).
func (b *Bridge) AdminOperator(ctx context.Context, r Request, target string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err == nil {
		_, err = b.adminCall(ctx, c, pubkey, "supportedmethods") // the door before the body
	}
	if err != nil {
		return b.adminFail(ctx, "operator", err)
	}
	if !eventcheck.LowerHex(target, 64) {
		return b.adminFail(ctx, "operator", reject.Invalidf("pubkey must be 64 lowercase hex characters"))
	}
	var body struct {
		Role string `json:"role"`
	}
	if err := strictJSON(r.Body, &body); err != nil {
		return b.adminFail(ctx, "operator", err)
	}
	if body.Role != "operator" {
		return b.adminFail(ctx, "operator", reject.Invalidf("role must be operator: this relay's operators are its moderators"))
	}
	if _, err := b.adminCall(ctx, c, pubkey, "addoperator", target); err != nil {
		return b.adminFail(ctx, "operator", err)
	}
	return JSON(http.StatusOK, adminOperator{Pubkey: target, EffectiveRole: "operator", Sources: []string{"db"}})
}

// errOtherCommunity answers a communityHost that is not a host of the
// community the request was sent to (nor any host: the same answer).
var errOtherCommunity = reject.Invalidf("communityHost must be a host of the community this request is sent to")

// sameCommunity checks the admin API's ?communityHost= names c.
func (b *Bridge) sameCommunity(ctx context.Context, r Request, c *community.Community) error {
	host := r.Query["communityHost"]
	if host == "" {
		return reject.Invalidf("communityHost is required")
	}
	other, err := b.Communities.Resolve(ctx, host)
	if err != nil {
		if community.Unknown(err) {
			return errOtherCommunity
		}
		return err
	}
	if other.ID != c.ID {
		return errOtherCommunity
	}
	return nil
}

// adminRestriction is Buzz's MemberRestrictionRecord.
type adminRestriction struct {
	Pubkey       string  `json:"pubkey"`
	Banned       bool    `json:"banned"`
	BanExpiresAt *string `json:"banExpiresAt"`
	BanReason    *string `json:"banReason"`
	MutedUntil   *string `json:"mutedUntil"`
	MuteReason   *string `json:"muteReason"`
	Actor        string  `json:"actorPubkey"`
	UpdatedAt    string  `json:"updatedAt"`
}

// AdminRestrictions is GET /api/admin/v1/members/restrictions
// ?communityHost=: {"items", "nextCursor": null} (one page: a community's
// restrictions in force are few).
func (b *Bridge) AdminRestrictions(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err == nil {
		err = b.sameCommunity(ctx, r, c)
	}
	if err != nil {
		return b.adminFail(ctx, "restrictions", err)
	}
	rows, err := b.Manager.Restricted(ctx, c, pubkey)
	if err != nil {
		return b.adminFail(ctx, "restrictions", err)
	}
	items := make([]adminRestriction, len(rows))
	for i, x := range rows {
		m := toRestrictionRow(x)
		items[i] = adminRestriction{Pubkey: m.Pubkey, Banned: m.Banned, BanExpiresAt: m.BanExpiresAt, BanReason: m.BanReason,
			MutedUntil: m.MutedUntil, MuteReason: m.MuteReason, Actor: m.Actor, UpdatedAt: m.UpdatedAt}
	}
	return JSON(http.StatusOK, map[string]any{"items": items, "nextCursor": nil})
}

// directBody is the body of a direct action (POST members/{pubkey}/ban,
// /timeout, events/{id}/delete).
type directBody struct {
	RequestID      string  `json:"requestId"`
	Reason         *string `json:"reason"`
	ExpirationSecs *int64  `json:"expirationSecs"`
}

// AdminMember is POST /api/admin/v1/members/{pubkey}/ban and /timeout
// ?communityHost= (action ban or timeout): NIP-86 banpubkey,
// timeoutpubkey; it answers {"actionId", "state": "succeeded", "replayed"}.
func (b *Bridge) AdminMember(ctx context.Context, r Request, action, target string) Response {
	return b.adminDirect(ctx, r, action, target)
}

// AdminMemberLift is DELETE /api/admin/v1/members/{pubkey}/ban and /timeout
// ?communityHost=: NIP-86 unbanpubkey, untimeoutpubkey; 204.
func (b *Bridge) AdminMemberLift(ctx context.Context, r Request, action, target string) Response {
	c, pubkey, err := b.adminTarget(ctx, r, false, target)
	if err == nil {
		method := map[string]string{"ban": "unbanpubkey", "timeout": "untimeoutpubkey"}[action]
		_, err = b.adminCall(ctx, c, pubkey, method, target)
	}
	if err != nil {
		return b.adminFail(ctx, action, err)
	}
	return Response{Status: http.StatusNoContent, Headers: map[string]string{}}
}

// AdminDeleteEvent is POST /api/admin/v1/events/{id}/delete
// ?communityHost=: NIP-86 banevent.
func (b *Bridge) AdminDeleteEvent(ctx context.Context, r Request, id string) Response {
	return b.adminDirect(ctx, r, "delete", id)
}

// adminTarget authenticates a member or event route: the token (binding
// the body when payload), the door (before anything is parsed, as Buzz
// authorizes first), ?communityHost= naming the request's community, the
// path's 64-hex target.
func (b *Bridge) adminTarget(ctx context.Context, r Request, payload bool, target string) (*community.Community, string, error) {
	c, pubkey, err := b.authenticateAs(ctx, r, payload)
	if err == nil {
		_, err = b.adminCall(ctx, c, pubkey, "supportedmethods")
	}
	if err == nil {
		err = b.sameCommunity(ctx, r, c)
	}
	if err == nil && !eventcheck.LowerHex(target, 64) {
		err = reject.Invalidf("the path's id must be 64 lowercase hex characters")
	}
	return c, pubkey, err
}

func (b *Bridge) adminDirect(ctx context.Context, r Request, action, target string) Response {
	c, pubkey, err := b.adminTarget(ctx, r, true, target)
	if err != nil {
		return b.adminFail(ctx, action, err)
	}
	var body directBody
	if err := strictJSON(r.Body, &body); err != nil {
		return b.adminFail(ctx, action, err)
	}
	if adminPrefix(body.RequestID) == "" {
		return b.adminFail(ctx, action, reject.Invalidf("requestId must be a UUID"))
	}
	if (action == "timeout") != (body.ExpirationSecs != nil) {
		return b.adminFail(ctx, action, reject.Invalidf("expirationSecs is required for a timeout and only valid for one"))
	}
	reason := ""
	if body.Reason != nil {
		reason = *body.Reason
	}
	switch action {
	case "ban":
		_, err = b.adminCall(ctx, c, pubkey, "banpubkey", target, reason)
	case "timeout":
		secs := *body.ExpirationSecs
		if secs <= 0 || secs > int64(manage.MaxRestriction/time.Second) {
			return b.adminFail(ctx, action, reject.Invalidf("expirationSecs must be from 1 to %d", int64(manage.MaxRestriction/time.Second)))
		}
		_, err = b.adminCall(ctx, c, pubkey, "timeoutpubkey", target, time.Now().Unix()+secs, reason)
	default:
		_, err = b.adminCall(ctx, c, pubkey, "banevent", target, reason)
	}
	if err != nil {
		return b.adminFail(ctx, action, err)
	}
	return JSON(http.StatusOK, map[string]any{"actionId": body.RequestID, "state": "succeeded", "replayed": false})
}

// strictJSON decodes body into v, refusing unknown fields as Buzz's admin
// API does.
func strictJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return reject.Invalidf("invalid JSON body")
	}
	return nil
}
