package store

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/reject"
)

// CheckBans refuses, with blocked:, an event the community's operators
// banned (NIP-86 banevent) or one signed or submitted by a banned pubkey
// (banpubkey). One statement; it reads the tables of migration 007.
func (t *Tx) CheckBans(ctx context.Context, ev *nostr.Event, authed string) error {
	var what string
	err := t.tx.QueryRow(ctx, `SELECT CASE
  WHEN EXISTS (SELECT 1 FROM community_banned_events WHERE community_id = $1 AND event_id = $2) THEN 'event'
  WHEN EXISTS (SELECT 1 FROM community_pubkey_rules WHERE community_id = $1 AND rule = 'ban' AND pubkey = ANY ($3)) THEN 'pubkey'
  ELSE '' END`, t.community, ev.ID, []string{ev.PubKey, authed}).Scan(&what)
	if err != nil {
		return fmt.Errorf("store: check bans: %w", err)
	}
	switch what {
	case "event":
		return reject.New(reject.Blocked, "this event was removed by the community's operators")
	case "pubkey":
		return reject.New(reject.Blocked, "this pubkey is banned from this community")
	}
	return nil
}
