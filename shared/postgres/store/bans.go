package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip62"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// The one predicate each of "banned now" and "timed out now": a row r of
// community_pubkey_rules (migrations 007 and 010) in force at the
// statement's time. A ban (NIP-86 banpubkey, a moderator's 9040) holds
// until its expires_at (NULL: for good); a timeout (9042) only until its
// expires_at (NULL: never in force). Every door asks through these two:
// the write path's BansCheck and the door guard's Standing
// (shared/service/guard); bans_test.go holds both to one case table.
const (
	bannedNow   = `r.rule = 'ban' AND (r.expires_at IS NULL OR r.expires_at > extract(epoch FROM now()))`
	timedOutNow = `r.rule = 'timeout' AND r.expires_at > extract(epoch FROM now())`
)

// ruleNow is an EXISTS over community $1's rules of the keys that keys (a
// SQL expression: one key, or ANY of an array) names, in force now by
// predicate (bannedNow or timedOutNow).
func ruleNow(keys, predicate string) string {
	return `EXISTS (SELECT 1 FROM community_pubkey_rules r WHERE r.community_id = $1 AND r.pubkey = ` + keys + ` AND ` + predicate + `)`
}

// BansCheck refuses, with blocked:, an event the community's operators
// banned (NIP-86 banevent) or one signed or submitted by a key banned or
// timed out now (bannedNow, timedOutNow). One statement; it
// costs no round trip of its own: it travels with the transaction's next
// statement (or its commit), and its refusal comes before whatever that
// statement or the rules after it decided, as if it had run first.
//
// It also refuses what a request to vanish (NIP-62) deleted coming back:
// an event of a key that asked to vanish created at or before the request
// (vanishedSQL), and a repost (kind 6 or 16) carrying one in its content
// (nip62.Reposted).
func (t *Tx) BansCheck(ctx context.Context, ev *nostr.Event, authed string) error {
	var what string
	repostOf, repostAt, _ := nip62.Reposted(ev)
	t.tx.deferCheck(&check{
		name: "check bans",
		sql: `SELECT CASE
  WHEN EXISTS (SELECT 1 FROM community_banned_events WHERE community_id = $1 AND event_id = $2) THEN 'event'
  WHEN ` + ruleNow("ANY ($3)", bannedNow) + ` THEN 'pubkey'
  WHEN ` + ruleNow("ANY ($3)", timedOutNow) + ` THEN 'timeout'
  WHEN ` + vanishedSQL("$4", "$5") + ` THEN 'vanished'
  WHEN $6 <> '' AND ` + vanishedSQL("$6", "$7") + ` THEN 'repost'
  ELSE '' END`,
		args: []any{t.community, ev.ID, []string{ev.PubKey, authed}, ev.PubKey, int64(ev.CreatedAt), repostOf, repostAt},
		dest: []any{&what},
		verdict: func() error {
			switch what {
			case "event":
				return reject.New(reject.Blocked, "this event was removed by the community's operators")
			case "pubkey":
				return records.ErrBanned
			case "timeout":
				return records.ErrTimedOut
			case "vanished":
				return ErrVanished
			case "repost":
				return ErrRepostVanished
			}
			return nil
		},
	})
	return nil
}

// The refusals of what a request to vanish deleted, coming back.
var (
	ErrVanished       = reject.New(reject.Blocked, "this key asked to vanish from this community (NIP-62) after this event was created: it is not accepted again")
	ErrRepostVanished = reject.New(reject.Blocked, "the reposted event's author asked to vanish from this community (NIP-62) after it was created: it is not accepted again")
)

// PubkeyRulesGetStanding reads pubkey's standing in community in one statement.
func (s *Store) PubkeyRulesGetStanding(ctx context.Context, community, pubkey string) (records.Standing, error) {
	var m records.Standing
	err := s.pool.QueryRow(ctx, `SELECT `+ruleNow("$2", bannedNow)+`, `+ruleNow("$2", timedOutNow)+`,
  EXISTS (SELECT 1 FROM channel_members WHERE community_id = $1 AND pubkey = $2 AND `+activeMember+`)
    OR EXISTS (SELECT 1 FROM community_pubkey_rules WHERE community_id = $1 AND pubkey = $2 AND rule = 'allow'),
  EXISTS (SELECT 1 FROM communities WHERE id = $1 AND $2 = ANY (operators))`, community, pubkey).Scan(&m.Banned, &m.TimedOut, &m.Member, &m.Operator)
	if err != nil {
		return records.Standing{}, errorf("standing of %s: %w", pubkey, err)
	}
	m.Member = m.Member || m.Operator
	return m, nil
}

// PubkeyRulesPut gives pubkey rule ("ban" or "allow") in community id,
// replacing the rule it had.
func (s *Store) PubkeyRulesPut(ctx context.Context, id, pubkey, rule, reason string, at int64) error {
	return s.PubkeyRulesSet(ctx, id, pubkey, rule, reason, "", nil, at)
}

// PubkeyRulesSet gives pubkey rule in community id as actor, until expires
// (nil: for good), replacing the rule it had (putPubkeyRule: a timeout
// never replaces a ban).
func (s *Store) PubkeyRulesSet(ctx context.Context, id, pubkey, rule, reason, actor string, expires *int64, at int64) error {
	_, err := s.pool.Exec(ctx, putPubkeyRule, id, pubkey, rule, reason, at, expires, actor) // moderation.go
	if err != nil {
		return errorf("community %s: %s pubkey: %w", id, rule, err)
	}
	return nil
}

// PubkeyRulesList lists community id's pubkeys under rule, oldest first, with
// their expiry; timeouts only while in force (timedOutNow).
func (s *Store) PubkeyRulesList(ctx context.Context, id, rule string) ([]records.PubkeyRule, error) {
	rows, err := s.pool.Query(ctx, `SELECT r.pubkey, r.reason, r.expires_at FROM community_pubkey_rules r
WHERE r.community_id = $1 AND r.rule = $2 AND (r.rule <> 'timeout' OR `+timedOutNow+`) ORDER BY r.created_at, r.pubkey`, id, rule)
	if err != nil {
		return nil, errorf("community %s: list %s: %w", id, rule, err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow) (records.PubkeyRule, error) {
		var p records.PubkeyRule
		return p, r.Scan(&p.Pubkey, &p.Reason, &p.ExpiresAt)
	})
	if err != nil {
		return nil, errorf("community %s: list %s: %w", id, rule, err)
	}
	return out, nil
}

// PubkeyRulesDeleteIn removes pubkey's rule in community id when it is one of
// rules; false when it had none such.
func (s *Store) PubkeyRulesDeleteIn(ctx context.Context, id, pubkey string, rules []string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM community_pubkey_rules WHERE community_id = $1 AND pubkey = $2 AND rule = ANY ($3)`,
		id, pubkey, rules)
	if err != nil {
		return false, errorf("community %s: lift %v of %s: %w", id, rules, pubkey, err)
	}
	return tag.RowsAffected() > 0, nil
}

// BannedEventsInsert records eventID as banned in community id and marks the event
// deleted, in one transaction.
func (s *Store) BannedEventsInsert(ctx context.Context, id, eventID, reason string, at int64) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO community_banned_events (community_id, event_id, reason, created_at)
VALUES ($1, $2, $3, $4) ON CONFLICT (community_id, event_id) DO UPDATE SET reason = EXCLUDED.reason`, id, eventID, reason, at); err != nil {
			return errorf("community %s: ban event: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE events SET deleted_at = $3 WHERE community_id = $1 AND id = $2 AND `+notDeleted, id, eventID, at); err != nil {
			return errorf("community %s: ban event: %w", id, err)
		}
		return nil
	})
}
