package store

import (
	"context"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip62"
)

// NIP-62, request to vanish: what one key leaves in a community, deleted
// in the transaction that stores its kind 62 (the tombstone, kept), and
// the check every later write carries (vanishedSQL, in BansCheck).

// Vanished is what KeyDataDelete removed.
type Vanished struct {
	// Events is the number of events deleted: the key's own (every kind,
	// reactions included) and the gift wraps addressed to it.
	Events int64
	// Blobs are the hashes of the blobs whose last uploader was the key:
	// their rows are gone, their objects (blobs/<community>/<hash>) are
	// the caller's to delete once the transaction commits.
	Blobs []string
	// Uploads are the ids of the key's staged uploads, whose rows are
	// gone; their objects (uploads/<community>/<id>) likewise.
	Uploads []string
}

// KeyDataDelete deletes, in the transaction's community, everything of
// pubkey but the event keep (its request to vanish): its events with their
// tag, thread and blob-reference rows, the gift wraps p-tagging it, the
// reports it filed, its push subscriptions and leases (30390, 30350) with
// the deliveries pending to it and those of its events, its uploads (the blobs nobody else uploaded leave the
// community's stored bytes, with every reference to them), its staged
// uploads and its daily upload counters. Memberships, roles and bans are
// the community's state and stay.
func (t *Tx) KeyDataDelete(ctx context.Context, pubkey, keep string) (Vanished, error) {
	var v Vanished
	if err := t.tx.QueryRow(ctx, `
WITH gone AS (
  SELECT id FROM events WHERE community_id = $1 AND pubkey = $2 AND id <> $3
  UNION
  SELECT event_id FROM event_tags WHERE community_id = $1 AND name = 'p' AND value = $2 AND kind = $4
),
tags AS (DELETE FROM event_tags t USING gone g WHERE t.community_id = $1 AND t.event_id = g.id),
thread AS (DELETE FROM thread_metadata m USING gone g WHERE m.community_id = $1 AND m.event_id = g.id),
refs AS (DELETE FROM blob_refs r USING gone g WHERE r.community_id = $1 AND r.event_id = g.id),
reports AS (DELETE FROM moderation_reports WHERE community_id = $1 AND reporter = $2),
pushsubs AS (DELETE FROM push_subscriptions WHERE community_id = $1 AND pubkey = $2),
pushes AS (DELETE FROM push_deliveries d WHERE d.community_id = $1
  AND (d.pubkey = $2 OR d.event_id IN (SELECT id FROM gone))),
ev AS (DELETE FROM events e USING gone g WHERE e.community_id = $1 AND e.id = g.id RETURNING e.id)
SELECT count(*) FROM ev`, t.community, pubkey, keep, kinds.GiftWrap).Scan(&v.Events); err != nil {
		return Vanished{}, errorf("delete the events of %s: %w", pubkey, err)
	}
	if err := t.tx.QueryRow(ctx, `
WITH owned AS (DELETE FROM blob_owners WHERE community_id = $1 AND pubkey = $2 RETURNING sha256),
orphan AS (
  DELETE FROM blobs b USING owned o WHERE b.community_id = $1 AND b.sha256 = o.sha256
    AND NOT EXISTS (SELECT 1 FROM blob_owners x WHERE x.community_id = $1 AND x.sha256 = b.sha256 AND x.pubkey <> $2)
  RETURNING b.sha256, b.size
),
orefs AS (DELETE FROM blob_refs r USING orphan o WHERE r.community_id = $1 AND r.sha256 = o.sha256),
stored AS (UPDATE media_stored SET bytes = greatest(bytes - (SELECT coalesce(sum(size), 0) FROM orphan), 0)
  WHERE community_id = $1 AND EXISTS (SELECT 1 FROM orphan)),
staged AS (DELETE FROM blob_uploads WHERE community_id = $1 AND pubkey = $2 RETURNING upload_id),
days AS (DELETE FROM media_key_days WHERE community_id = $1 AND pubkey = $2)
SELECT coalesce((SELECT array_agg(sha256 ORDER BY sha256) FROM orphan), '{}'),
       coalesce((SELECT array_agg(upload_id ORDER BY upload_id) FROM staged), '{}')`,
		t.community, pubkey).Scan(&v.Blobs, &v.Uploads); err != nil {
		return Vanished{}, errorf("delete the media of %s: %w", pubkey, err)
	}
	return v, nil
}

// vanishedSQL is an EXISTS over community $1's requests to vanish from
// the key pk (a SQL expression) dated at or after at: an event of that key
// created then is one the key asked to have deleted, which never comes
// back. The request itself (id $2) is exempt, so its repeat is a
// duplicate.
func vanishedSQL(pk, at string) string {
	return `EXISTS (SELECT 1 FROM events v WHERE v.community_id = $1 AND v.pubkey = ` + pk + ` AND v.kind = ` +
		strconv.Itoa(nip62.Kind) + ` AND v.created_at >= ` + at + ` AND v.id <> $2)`
}

// VanishedCheck is the part of BansCheck a request to vanish still asks
// (a banned key may send one): a 62 dated at or before the key's newest
// stored one is refused with ErrVanished. Deferred, as BansCheck.
func (t *Tx) VanishedCheck(ctx context.Context, ev *nostr.Event) error {
	var vanished bool
	t.tx.deferCheck(&check{
		name: "check vanished",
		sql:  `SELECT ` + vanishedSQL("$3", "$4"),
		args: []any{t.community, ev.ID, ev.PubKey, int64(ev.CreatedAt)},
		dest: []any{&vanished},
		verdict: func() error {
			if vanished {
				return ErrVanished
			}
			return nil
		},
	})
	return nil
}
