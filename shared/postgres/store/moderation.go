package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// Moderation: the bans NIP-86 manages and Buzz's moderation commands
// (9040-9044) act on, their audit rows, and the NIP-56 report queue
// (migrations/010).

// putPubkeyRule is the one statement that gives a pubkey a rule, for both
// doors: NIP-86 banpubkey/allowpubkey (Store.PubkeyRulesPut) and the
// moderation commands (Tx.PubkeyRulesUpsert). $1 community, $2 pubkey, $3 rule
// (ban, allow, timeout), $4 reason, $5 created_at, $6 expires_at (NULL:
// never), $7 actor (the operator who set it; empty when unknown). A timeout never
// replaces a ban.
const putPubkeyRule = `INSERT INTO community_pubkey_rules (community_id, pubkey, rule, reason, created_at, expires_at, actor)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (community_id, pubkey) DO UPDATE SET rule = EXCLUDED.rule, reason = EXCLUDED.reason,
  created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at, actor = EXCLUDED.actor
WHERE NOT (EXCLUDED.rule = 'timeout' AND community_pubkey_rules.rule = 'ban')`

// OperatorsExists reports whether pubkey is one of the community's operators
// (its moderators).
func (t *Tx) OperatorsExists(ctx context.Context, pubkey string) (bool, error) {
	var ok bool
	err := t.tx.QueryRow(ctx, `SELECT $2 = ANY(operators) FROM communities WHERE id = $1`, t.community, pubkey).Scan(&ok)
	if notFound(err) {
		return false, nil
	}
	if err != nil {
		return false, errorf("operator %s: %w", pubkey, err)
	}
	return ok, nil
}

// PubkeyRulesUpsert gives pubkey rule in the transaction's community
// (putPubkeyRule); expires nil never expires.
func (t *Tx) PubkeyRulesUpsert(ctx context.Context, pubkey, rule, reason, actor string, expires *int64, at int64) error {
	if _, err := t.tx.Exec(ctx, putPubkeyRule, t.community, pubkey, rule, reason, at, expires, actor); err != nil {
		return errorf("%s %s: %w", rule, pubkey, err)
	}
	return nil
}

// PubkeyRulesDelete removes pubkey's rule when it is rule; false when it had
// none such.
func (t *Tx) PubkeyRulesDelete(ctx context.Context, pubkey, rule string) (bool, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM community_pubkey_rules WHERE community_id = $1 AND pubkey = $2 AND rule = $3`,
		t.community, pubkey, rule)
	if err != nil {
		return false, errorf("lift %s of %s: %w", rule, pubkey, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ModerationActionsInsert writes a's audit row; false when the command was already
// recorded (a repeat).
func (t *Tx) ModerationActionsInsert(ctx context.Context, a records.ModerationAction) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO moderation_actions (community_id, event_id, actor, kind, target, reason, expires_at, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		t.community, a.EventID, a.Actor, a.Kind, a.Target, a.Reason, a.Expires, a.CreatedAt)
	if err != nil {
		return false, errorf("audit moderation %s: %w", a.EventID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ModerationReportsInsert queues r; false when it is already queued.
func (t *Tx) ModerationReportsInsert(ctx context.Context, r records.Report) (bool, error) {
	var target *string
	if r.TargetEvent != "" {
		target = &r.TargetEvent
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO moderation_reports (community_id, id, reporter, target_pubkey, target_event, report_type, content, raw, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
		t.community, r.ID, r.Reporter, r.TargetPubkey, target, r.Type, r.Content, r.Raw, r.CreatedAt)
	if err != nil {
		return false, errorf("file report %s: %w", r.ID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ModerationReportsUpdate closes the open report id with status (resolved or
// dismissed); false when no such report is open.
func (t *Tx) ModerationReportsUpdate(ctx context.Context, id, by, status, resolution string, at int64) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE moderation_reports SET status = $3, resolved_by = $4, resolution = $5, resolved_at = $6
WHERE community_id = $1 AND id = $2 AND status = 'open'`, t.community, id, status, by, resolution, at)
	if err != nil {
		return false, errorf("resolve report %s: %w", id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ModerationReportsUpdateReopen returns the closed report id to open (no
// resolver, resolution or time) as request (a client's idempotency key)
// asks: found false when there is no such report; replayed when request
// already reopened it (nothing changes, whatever it has become since);
// else reopened false when it is open now. shown is its status before
// (records.Report.ShownStatus).
func (t *Tx) ModerationReportsUpdateReopen(ctx context.Context, id, request string) (found, reopened, replayed bool, shown string, err error) {
	var r records.Report
	var last string
	err = t.tx.QueryRow(ctx, `SELECT status, coalesce(resolution, ''), coalesce(reopen_request, '') FROM moderation_reports
WHERE community_id = $1 AND id = $2 FOR UPDATE`, t.community, id).Scan(&r.Status, &r.Resolution, &last)
	if notFound(err) {
		return false, false, false, "", nil
	}
	if err != nil {
		return false, false, false, "", errorf("reopen report %s: %w", id, err)
	}
	shown = r.ShownStatus()
	switch {
	case last == request:
		return true, false, true, shown, nil
	case r.Status == records.StatusOpen:
		return true, false, false, shown, nil
	}
	if _, err := t.tx.Exec(ctx, `UPDATE moderation_reports SET status = 'open', resolved_by = NULL, resolution = NULL, resolved_at = NULL,
  reopen_request = $3 WHERE community_id = $1 AND id = $2`, t.community, id, request); err != nil {
		return false, false, false, "", errorf("reopen report %s: %w", id, err)
	}
	return true, true, false, shown, nil
}

// ReportPage is one read of a community's report queue, the one place
// its paging and filters are said: by Status ("" any; records.StatusOpen,
// StatusDismissed; records.StatusEscalated the reports resolved by
// escalation, records.StatusResolved the others resolved); Type (a NIP-56
// report type, "" any); Target ("event" or "pubkey", "" any); created in
// [Since, Until) (0: unbounded); after report After in the page's order
// ("": from the first; a report closed or reopened since still marks its
// place), keyset (created_at, id); oldest first, or newest with Newest; at
// most Limit.
type ReportPage struct {
	Status, Type, Target string
	Since, Until         int64
	After                string
	Newest               bool
	Limit                int
}

const reportColumns = `id, reporter, target_pubkey, coalesce(target_event, ''), report_type, content, raw, created_at, status,
  coalesce(resolved_by, ''), coalesce(resolution, ''), resolved_at`

func scanReport(r pgx.CollectableRow) (records.Report, error) {
	var p records.Report
	return p, r.Scan(&p.ID, &p.Reporter, &p.TargetPubkey, &p.TargetEvent, &p.Type, &p.Content, &p.Raw, &p.CreatedAt, &p.Status,
		&p.ResolvedBy, &p.Resolution, &p.ResolvedAt)
}

// ModerationReportsList lists a page (ReportPage) of community's reports.
func (s *Store) ModerationReportsList(ctx context.Context, community string, p ReportPage) ([]records.Report, error) {
	after, order := `>`, `created_at, id`
	if p.Newest {
		after, order = `<`, `created_at DESC, id DESC`
	}
	rows, err := s.pool.Query(ctx, `SELECT `+reportColumns+` FROM moderation_reports r
WHERE community_id = $1 AND CASE $2
  WHEN '' THEN true
  WHEN 'escalated' THEN status = 'resolved' AND resolution = 'escalate'
  WHEN 'resolved' THEN status = 'resolved' AND resolution IS DISTINCT FROM 'escalate'
  ELSE status = $2 END
  AND ($3 = '' OR report_type = $3)
  AND CASE $4 WHEN '' THEN true WHEN 'event' THEN target_event IS NOT NULL ELSE target_event IS NULL END
  AND ($5 = 0 OR created_at >= $5) AND ($6 = 0 OR created_at < $6)
  AND ($7 = '' OR (created_at, id) `+after+` (SELECT a.created_at, a.id FROM moderation_reports a WHERE a.community_id = $1 AND a.id = $7))
ORDER BY `+order+` LIMIT $8`,
		community, p.Status, p.Type, p.Target, p.Since, p.Until, p.After, p.Limit)
	if err != nil {
		return nil, errorf("reports of %s: %w", community, err)
	}
	out, err := collect(rows, scanReport)
	if err != nil {
		return nil, errorf("reports of %s: %w", community, err)
	}
	return out, nil
}

// ModerationReportsListOpen lists community's open reports, oldest first,
// after report after, at most limit (ReportPage).
func (s *Store) ModerationReportsListOpen(ctx context.Context, community, after string, limit int) ([]records.Report, error) {
	return s.ModerationReportsList(ctx, community, ReportPage{Status: records.StatusOpen, After: after, Limit: limit})
}

// ModerationActionsList lists all of community's audit rows, oldest first.
func (s *Store) ModerationActionsList(ctx context.Context, community string) ([]records.ModerationAction, error) {
	return s.ModerationActionsListPage(ctx, community, false, 0)
}

// ModerationActionsListPage lists community's audit rows, oldest first, or
// newest first with newest; at most limit (0: all). The audit's one read.
func (s *Store) ModerationActionsListPage(ctx context.Context, community string, newest bool, limit int) ([]records.ModerationAction, error) {
	order := `created_at, event_id`
	if newest {
		order = `created_at DESC, event_id DESC`
	}
	rows, err := s.pool.Query(ctx, `SELECT event_id, actor, kind, target, reason, expires_at, created_at
FROM moderation_actions WHERE community_id = $1 ORDER BY `+order+` LIMIT nullif($2, 0)`, community, limit)
	if err != nil {
		return nil, errorf("moderation actions of %s: %w", community, err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow) (records.ModerationAction, error) {
		var a records.ModerationAction
		return a, r.Scan(&a.EventID, &a.Actor, &a.Kind, &a.Target, &a.Reason, &a.Expires, &a.CreatedAt)
	})
	if err != nil {
		return nil, errorf("moderation actions of %s: %w", community, err)
	}
	return out, nil
}
