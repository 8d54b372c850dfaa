package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/manage"
)

// Buzz desktop's moderation pane (block/buzz desktop/src/shared/api/
// moderation.ts; the relay's api/bridge.rs moderation_reports, _audit and
// _restricted): three NIP-98 GETs of the community at the request's host,
// for its operators (403 restricted: for any other key), each an array of
// rows in Buzz's snake_case shapes, ?limit= clamped to 1-500 (500 when
// absent), newest first. Writes (9040-9044) go over the WebSocket as
// events. manage.Service answers them (the NIP-86 door).

// ModerationReports is GET /moderation/reports[?status=&limit=].
func (b *Bridge) ModerationReports(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.Fail(ctx, "moderation reports", err)
	}
	limit, err := queryLimit(r)
	if err != nil {
		return b.Fail(ctx, "moderation reports", err)
	}
	rows, err := b.Manager.Reports(ctx, c, pubkey, manage.ReportFilter{Status: r.Query["status"], Limit: limit})
	if err != nil {
		return b.Fail(ctx, "moderation reports", err)
	}
	out := make([]reportRow, len(rows))
	for i, rep := range rows {
		out[i] = toReportRow(rep)
	}
	return JSON(http.StatusOK, out)
}

// ModerationAudit is GET /moderation/audit[?limit=].
func (b *Bridge) ModerationAudit(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.Fail(ctx, "moderation audit", err)
	}
	limit, err := queryLimit(r)
	if err != nil {
		return b.Fail(ctx, "moderation audit", err)
	}
	rows, err := b.Manager.Audit(ctx, c, pubkey, limit)
	if err != nil {
		return b.Fail(ctx, "moderation audit", err)
	}
	out := make([]actionRow, len(rows))
	for i, a := range rows {
		out[i] = toActionRow(a)
	}
	return JSON(http.StatusOK, out)
}

// ModerationRestricted is GET /moderation/restricted.
func (b *Bridge) ModerationRestricted(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.Fail(ctx, "moderation restricted", err)
	}
	rows, err := b.Manager.Restricted(ctx, c, pubkey)
	if err != nil {
		return b.Fail(ctx, "moderation restricted", err)
	}
	out := make([]restrictionRow, len(rows))
	for i, x := range rows {
		out[i] = toRestrictionRow(x)
	}
	return JSON(http.StatusOK, out)
}

// queryLimit is ?limit=: absent, or a whole number (Buzz clamps it; one
// that is no number is a 400).
func queryLimit(r Request) (int, error) {
	v, ok := r.Query["limit"]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, reject.Invalidf("limit must be a whole number")
	}
	return n, nil
}

// reportRow is Buzz's report_json.
type reportRow struct {
	ID            string  `json:"id"`
	ReportEventID string  `json:"report_event_id"`
	Reporter      string  `json:"reporter_pubkey"`
	TargetKind    string  `json:"target_kind"`
	Target        string  `json:"target"`
	ChannelID     *string `json:"channel_id"`
	ReportType    string  `json:"report_type"`
	Note          *string `json:"note"`
	Status        string  `json:"status"`
	ResolvedBy    *string `json:"resolved_by"`
	ResolvedAt    *string `json:"resolved_at"`
	ActionID      *string `json:"action_id"`
	CreatedAt     string  `json:"created_at"`
}

func toReportRow(r records.Report) reportRow {
	kind, target := reportTarget(r)
	return reportRow{ID: AdminID(r.ID), ReportEventID: r.ID, Reporter: r.Reporter, TargetKind: kind, Target: target,
		ReportType: r.Type, Note: optional(r.Content), Status: r.ShownStatus(), ResolvedBy: optional(r.ResolvedBy),
		ResolvedAt: optionalTime(r.ResolvedAt), CreatedAt: timestamp(r.CreatedAt)}
}

// reportTarget is what a report names: the event when it names one, else
// the key.
func reportTarget(r records.Report) (kind, target string) {
	if r.TargetEvent != "" {
		return "event", r.TargetEvent
	}
	return "pubkey", r.TargetPubkey
}

// actionRow is Buzz's action_json.
type actionRow struct {
	ID               string  `json:"id"`
	Actor            string  `json:"actor_pubkey"`
	Action           string  `json:"action"`
	TargetPubkey     *string `json:"target_pubkey"`
	TargetEventID    *string `json:"target_event_id"`
	ChannelID        *string `json:"channel_id"`
	ReasonCode       *string `json:"reason_code"`
	PublicReason     *string `json:"public_reason"`
	PrivateReason    *string `json:"private_reason"`
	MatchedPrincipal *string `json:"matched_principal"`
	CreatedAt        string  `json:"created_at"`
}

// auditActions names each audited kind as Buzz's audit log does.
var auditActions = map[int]string{
	kinds.ModerationBan: "ban", kinds.ModerationUnban: "unban", kinds.ModerationTimeout: "timeout",
	kinds.ModerationUntimeout: "untimeout", kinds.ModerationResolve: "resolve_report", kinds.Vanish: "vanish",
}

func toActionRow(a records.ModerationAction) actionRow {
	row := actionRow{ID: a.EventID, Actor: a.Actor, Action: auditActions[a.Kind], PublicReason: optional(a.Reason), CreatedAt: timestamp(a.CreatedAt)}
	if row.Action == "" {
		row.Action = "kind " + strconv.Itoa(a.Kind)
	}
	switch a.Kind {
	case kinds.ModerationResolve:
		row.TargetEventID = optional(a.Target) // the report's event id
	case kinds.Vanish:
		row.TargetPubkey = optional(a.Actor)
	default:
		row.TargetPubkey = optional(a.Target)
	}
	return row
}

// restrictionRow is Buzz's ban_json: a ban, or a timeout (muted_until).
type restrictionRow struct {
	Pubkey       string  `json:"pubkey"`
	Banned       bool    `json:"banned"`
	BanExpiresAt *string `json:"ban_expires_at"`
	BanReason    *string `json:"ban_reason"`
	MutedUntil   *string `json:"muted_until"`
	MuteReason   *string `json:"mute_reason"`
	Actor        string  `json:"actor_pubkey"`
	UpdatedAt    string  `json:"updated_at"`
}

func toRestrictionRow(x records.Restriction) restrictionRow {
	row := restrictionRow{Pubkey: x.Pubkey, Actor: x.Actor, UpdatedAt: timestamp(x.UpdatedAt)}
	if x.Rule == "ban" {
		row.Banned, row.BanExpiresAt, row.BanReason = true, optionalTime(x.ExpiresAt), optional(x.Reason)
	} else {
		row.MutedUntil, row.MuteReason = optionalTime(x.ExpiresAt), optional(x.Reason)
	}
	return row
}

// AdminID is the UUID-shaped id Buzz's clients parse (its rows are keyed by
// UUID): the first 32 hex digits of a 64-hex id, as 8-4-4-4-12. The store
// finds the row back by that prefix (manage.Service.Report).
func AdminID(hexID string) string {
	if len(hexID) < 32 {
		return hexID
	}
	h := hexID[:32]
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// adminPrefix is the 32 lowercase hex digits of an AdminID (any case and
// with or without dashes); "" when id is no UUID.
func adminPrefix(id string) string {
	h := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if len(h) != 32 || len(id) != 36 && len(id) != 32 {
		return ""
	}
	if _, err := hex.DecodeString(h); err != nil {
		return ""
	}
	return h
}

// CommunityUUID is the UUID Buzz's admin API names a community by: derived
// from the community's id (a name-based UUID, version 8).
func CommunityUUID(id string) string {
	sum := sha256.Sum256([]byte("buzz-community:" + id))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return AdminID(hex.EncodeToString(b))
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalTime(at *int64) *string {
	if at == nil {
		return nil
	}
	s := timestamp(*at)
	return &s
}

// timestamp is unix seconds as RFC 3339 in UTC, as Buzz's rows carry time.
func timestamp(at int64) string { return time.Unix(at, 0).UTC().Format(time.RFC3339) }
