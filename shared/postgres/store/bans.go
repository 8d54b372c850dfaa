package store

import (
	"context"

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
