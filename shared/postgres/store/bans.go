package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// CheckBans refuses, with blocked:, an event the community's operators
// banned (NIP-86 banevent) or one signed or submitted by a banned pubkey
// (banpubkey, or a moderator's 9040 until its expiry), or whose pubkey a
// moderator timed out (9042) until the expiry. One statement, reading the
// tables of migrations 007 and 010; it
// costs no round trip of its own: it travels with the transaction's next
// statement (or its commit), and its refusal comes before whatever that
// statement or the rules after it decided, as if it had run first.
func (t *Tx) CheckBans(ctx context.Context, ev *nostr.Event, authed string) error {
	var what string
	t.tx.deferCheck(&check{
		name: "check bans",
		sql: `SELECT CASE
  WHEN EXISTS (SELECT 1 FROM community_banned_events WHERE community_id = $1 AND event_id = $2) THEN 'event'
  WHEN EXISTS (SELECT 1 FROM community_pubkey_rules WHERE community_id = $1 AND rule = 'ban' AND pubkey = ANY ($3)
    AND (expires_at IS NULL OR expires_at > extract(epoch FROM now()))) THEN 'pubkey'
  WHEN EXISTS (SELECT 1 FROM community_pubkey_rules WHERE community_id = $1 AND rule = 'timeout' AND pubkey = ANY ($3)
    AND expires_at > extract(epoch FROM now())) THEN 'timeout'
  ELSE '' END`,
		args: []any{t.community, ev.ID, []string{ev.PubKey, authed}},
		dest: []any{&what},
		verdict: func() error {
			switch what {
			case "event":
				return reject.New(reject.Blocked, "this event was removed by the community's operators")
			case "pubkey":
				return reject.New(reject.Blocked, "this pubkey is banned from this community")
			case "timeout":
				return reject.New(reject.Blocked, "this pubkey is timed out in this community until the timeout expires")
			}
			return nil
		},
	})
	return nil
}

// PubkeyRule is a row of community_pubkey_rules.
type PubkeyRule struct{ Pubkey, Reason string }

// SetPubkeyRule gives pubkey rule ("ban" or "allow") in community id,
// replacing the rule it had.
func (s *Store) SetPubkeyRule(ctx context.Context, id, pubkey, rule, reason string, at int64) error {
	_, err := s.pool.Exec(ctx, putPubkeyRule, id, pubkey, rule, reason, at, nil) // moderation.go
	if err != nil {
		return errorf("community %s: %s pubkey: %w", id, rule, err)
	}
	return nil
}

// PubkeyRules lists community id's pubkeys under rule, oldest first.
func (s *Store) PubkeyRules(ctx context.Context, id, rule string) ([]PubkeyRule, error) {
	rows, err := s.pool.Query(ctx, `SELECT pubkey, reason FROM community_pubkey_rules
WHERE community_id = $1 AND rule = $2 ORDER BY created_at, pubkey`, id, rule)
	if err != nil {
		return nil, errorf("community %s: list %s: %w", id, rule, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PubkeyRule, error) {
		var p PubkeyRule
		return p, r.Scan(&p.Pubkey, &p.Reason)
	})
	if err != nil {
		return nil, errorf("community %s: list %s: %w", id, rule, err)
	}
	return out, nil
}

// BanEvent records eventID as banned in community id and marks the event
// deleted, in one transaction.
func (s *Store) BanEvent(ctx context.Context, id, eventID, reason string, at int64) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO community_banned_events (community_id, event_id, reason, created_at)
VALUES ($1, $2, $3, $4) ON CONFLICT (community_id, event_id) DO UPDATE SET reason = EXCLUDED.reason`, id, eventID, reason, at); err != nil {
			return errorf("community %s: ban event: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE events SET deleted_at = $3 WHERE community_id = $1 AND id = $2 AND deleted_at IS NULL`, id, eventID, at); err != nil {
			return errorf("community %s: ban event: %w", id, err)
		}
		return nil
	})
}
