package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// The reads of Buzz desktop's moderation and admin panes (issue 52): the
// report queue by status, newest first; one report by the 32 hex digits
// its admin id carries; the audit newest first; the restrictions in force;
// and kind 42000 feedback (migrations/025). The queue's and the audit's
// paging is moderation.go's (ReportPage, ModerationActionsList).

// ModerationReportsGet is community's report whose id starts with prefix
// (32 lowercase hex digits: an admin id); false when there is none.
func (s *Store) ModerationReportsGet(ctx context.Context, community, prefix string) (records.Report, bool, error) {
	return byAdminID(ctx, s, "report", `SELECT `+reportColumns+` FROM moderation_reports
WHERE community_id = $1 AND id LIKE $2 || '%' ORDER BY id LIMIT 1`, scanReport, community, prefix)
}

// byAdminID is the row of query (its $1 the community, $2 the 32 hex
// digits an admin id carries: the prefix of a 64-hex id) scanned by scan;
// false when there is none. The one lookup of the admin API's ids.
func byAdminID[T any](ctx context.Context, s *Store, what, query string, scan pgx.RowToFunc[T], community, prefix string) (T, bool, error) {
	var zero T
	rows, err := s.pool.Query(ctx, query, community, prefix)
	if err != nil {
		return zero, false, errorf("%s %s: %w", what, prefix, err)
	}
	out, err := collect(rows, scan)
	if err != nil {
		return zero, false, errorf("%s %s: %w", what, prefix, err)
	}
	if len(out) == 0 {
		return zero, false, nil
	}
	return out[0], true, nil
}

// PubkeyRulesListRestricted lists community's keys banned or timed out now
// (bannedNow, timedOutNow), newest first, each with who set it (the
// community's relay key for a rule set before that was kept).
func (s *Store) PubkeyRulesListRestricted(ctx context.Context, community string) ([]records.Restriction, error) {
	rows, err := s.pool.Query(ctx, `SELECT r.pubkey, r.rule, r.reason, r.expires_at, r.created_at,
  coalesce(nullif(r.actor, ''), c.relay_pubkey, '')
FROM community_pubkey_rules r JOIN communities c ON c.id = r.community_id
WHERE r.community_id = $1 AND ((`+bannedNow+`) OR (`+timedOutNow+`))
ORDER BY r.created_at DESC, r.pubkey`, community)
	if err != nil {
		return nil, errorf("restrictions of %s: %w", community, err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow) (records.Restriction, error) {
		var p records.Restriction
		return p, r.Scan(&p.Pubkey, &p.Rule, &p.Reason, &p.ExpiresAt, &p.UpdatedAt, &p.Actor)
	})
	if err != nil {
		return nil, errorf("restrictions of %s: %w", community, err)
	}
	return out, nil
}

// ProductFeedbackInsert keeps f in the transaction's community; false when
// that event is already kept (a repeat).
func (t *Tx) ProductFeedbackInsert(ctx context.Context, f records.Feedback) (bool, error) {
	var category *string
	if f.Category != "" {
		category = &f.Category
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO product_feedback (community_id, event_id, submitter, category, body, tags, event_created_at, received_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		t.community, f.EventID, f.Submitter, category, f.Body, string(f.Tags), f.EventCreatedAt, f.ReceivedAt)
	if err != nil {
		return false, errorf("feedback %s: %w", f.EventID, err)
	}
	return tag.RowsAffected() > 0, nil
}

const feedbackColumns = `event_id, submitter, coalesce(category, ''), body, tags::text, event_created_at, received_at, status`

func scanFeedback(r pgx.CollectableRow) (records.Feedback, error) {
	var f records.Feedback
	var tags string
	err := r.Scan(&f.EventID, &f.Submitter, &f.Category, &f.Body, &tags, &f.EventCreatedAt, &f.ReceivedAt, &f.Status)
	f.Tags = []byte(tags)
	return f, err
}

// ProductFeedbackList lists community's feedback newest first, at most
// limit.
func (s *Store) ProductFeedbackList(ctx context.Context, community string, limit int) ([]records.Feedback, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+feedbackColumns+` FROM product_feedback
WHERE community_id = $1 ORDER BY received_at DESC, event_id DESC LIMIT $2`, community, limit)
	if err != nil {
		return nil, errorf("feedback of %s: %w", community, err)
	}
	out, err := collect(rows, scanFeedback)
	if err != nil {
		return nil, errorf("feedback of %s: %w", community, err)
	}
	return out, nil
}

// ProductFeedbackGet is community's feedback whose event id starts with
// prefix (32 lowercase hex digits: an admin id); false when there is none.
func (s *Store) ProductFeedbackGet(ctx context.Context, community, prefix string) (records.Feedback, bool, error) {
	return byAdminID(ctx, s, "feedback", `SELECT `+feedbackColumns+` FROM product_feedback
WHERE community_id = $1 AND event_id LIKE $2 || '%' ORDER BY event_id LIMIT 1`, scanFeedback, community, prefix)
}

// ProductFeedbackSetStatus sets the status of community's feedback eventID;
// false when there is none.
func (s *Store) ProductFeedbackSetStatus(ctx context.Context, community, eventID, status string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE product_feedback SET status = $3 WHERE community_id = $1 AND event_id = $2`, community, eventID, status)
	if err != nil {
		return false, errorf("feedback %s: %w", eventID, err)
	}
	return tag.RowsAffected() > 0, nil
}
