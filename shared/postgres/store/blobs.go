package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/records"
)

// Media (migrations/011_blobs.sql): Blossom blobs' metadata, owners, staged
// uploads and quotas. The bytes live in S3 (shared/aws/s3blobs); every
// write here is one transaction.

// BlobsGet reads one blob of community; ErrNotFound when it holds none.
func (s *Store) BlobsGet(ctx context.Context, community, sha256 string) (*records.Blob, error) {
	b := records.Blob{SHA256: sha256}
	err := s.pool.QueryRow(ctx, `SELECT size, type, created_at FROM blobs WHERE community_id = $1 AND sha256 = $2`,
		community, sha256).Scan(&b.Size, &b.Type, &b.CreatedAt)
	if err != nil {
		return nil, errorf("blob: %w", err)
	}
	return &b, nil
}

// BlobsGetAccess reads community's blob of sha256 as reader ("" for a request
// without a key) may read it, in one statement.
func (s *Store) BlobsGetAccess(ctx context.Context, community, sha256, reader string) (records.BlobAccess, error) {
	b := newSQL(community, reader)
	h := b.arg(sha256)
	rd := b.readerArg()
	q := `SELECT b.size, b.type, b.created_at,
  EXISTS (SELECT 1 FROM blob_uploads u WHERE u.community_id = $1 AND u.sha256 = ` + h + `),
  EXISTS (SELECT 1 FROM blob_owners o WHERE o.community_id = $1 AND o.sha256 = ` + h + ` AND o.pubkey = ` + rd + `),
  NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.community_id = $1 AND r.sha256 = ` + h + `)
    OR EXISTS (SELECT 1 FROM blob_refs r JOIN events e ON e.community_id = r.community_id AND e.id = r.event_id
      WHERE r.community_id = $1 AND r.sha256 = ` + h + ` AND e.` + notDeleted + `
        AND ` + maySeeSQL(b, nil, nil, nil) + `)
FROM (SELECT 1) one LEFT JOIN blobs b ON b.community_id = $1 AND b.sha256 = ` + h
	var (
		size, at  *int64
		typ       *string
		a         records.BlobAccess
		referable bool
	)
	if err := s.pool.QueryRow(ctx, q, b.args...).Scan(&size, &typ, &at, &a.Staged, &a.Owner, &referable); err != nil {
		return records.BlobAccess{}, errorf("blob for a reader: %w", err)
	}
	if size != nil {
		a.Blob = &records.Blob{SHA256: sha256, Size: *size, Type: *typ, CreatedAt: *at}
		a.Readable = a.Owner || referable
	}
	return a, nil
}

// MediaUsageGet is what pubkey uploaded on day and what community stores.
func (s *Store) MediaUsageGet(ctx context.Context, community, pubkey string, day int64) (keyDay, stored int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT
  coalesce((SELECT bytes FROM media_key_days WHERE community_id = $1 AND pubkey = $2 AND day = $3), 0),
  coalesce((SELECT bytes FROM media_stored WHERE community_id = $1), 0)`, community, pubkey, day).Scan(&keyDay, &stored)
	if err != nil {
		return 0, 0, errorf("media usage: %w", err)
	}
	return keyDay, stored, nil
}

// MediaKeyDaysAdd adds bytes to what pubkey uploaded on day, unless the total
// would pass limit (ErrKeyDayQuota, nothing added; limit 0: none). The
// key's days older than a week are pruned by the same statement.
func (s *Store) MediaKeyDaysAdd(ctx context.Context, community, pubkey string, day, bytes, limit int64) error {
	var total int64
	err := s.pool.QueryRow(ctx, `WITH prune AS (
  DELETE FROM media_key_days WHERE community_id = $1 AND pubkey = $2 AND day < $3 - 7
)
INSERT INTO media_key_days AS d (community_id, pubkey, day, bytes)
SELECT $1, $2, $3::bigint, $4::bigint WHERE $5::bigint = 0 OR $4::bigint <= $5::bigint
ON CONFLICT (community_id, pubkey, day) DO UPDATE SET bytes = d.bytes + EXCLUDED.bytes
  WHERE $5::bigint = 0 OR d.bytes + EXCLUDED.bytes <= $5::bigint
RETURNING bytes`, community, pubkey, day, bytes, limit).Scan(&total)
	switch {
	case notFound(err):
		return records.ErrKeyDayQuota
	case err != nil:
		return errorf("charge media bytes: %w", err)
	}
	return nil
}

// BlobsInsert records an upload in one transaction: the blob (when new, its
// size charged to the community's stored bytes unless that passes
// StoredLimit: ErrStoredQuota, nothing written), pubkey as an owner, and
// the staged upload's row dropped. It returns the blob as stored (the
// first upload's type and time) and whether this upload created it.
func (s *Store) BlobsInsert(ctx context.Context, b records.NewBlob) (records.Blob, bool, error) {
	var out records.Blob
	var created bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var stored *int64
		err := tx.QueryRow(ctx, `WITH ins AS (
  INSERT INTO blobs (community_id, sha256, size, type, created_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (community_id, sha256) DO NOTHING
  RETURNING size
)
INSERT INTO media_stored AS m (community_id, bytes) SELECT $1, size FROM ins
ON CONFLICT (community_id) DO UPDATE SET bytes = m.bytes + EXCLUDED.bytes
RETURNING bytes`, b.Community, b.SHA256, b.Size, b.Type, b.At).Scan(&stored)
		switch {
		case notFound(err): // already stored
		case err != nil:
			return err
		default:
			created = true
			if b.StoredLimit > 0 && *stored > b.StoredLimit {
				return records.ErrStoredQuota
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO blob_owners (community_id, sha256, pubkey, uploaded_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (community_id, sha256, pubkey) DO NOTHING`, b.Community, b.SHA256, b.Pubkey, b.At); err != nil {
			return err
		}
		if b.Upload != "" {
			if _, err := tx.Exec(ctx, `DELETE FROM blob_uploads WHERE community_id = $1 AND upload_id = $2`, b.Community, b.Upload); err != nil {
				return err
			}
		}
		out.SHA256 = b.SHA256
		return tx.QueryRow(ctx, `SELECT size, type, created_at FROM blobs WHERE community_id = $1 AND sha256 = $2`,
			b.Community, b.SHA256).Scan(&out.Size, &out.Type, &out.CreatedAt)
	})
	if errors.Is(err, records.ErrStoredQuota) {
		return records.Blob{}, false, records.ErrStoredQuota
	}
	if err != nil {
		return records.Blob{}, false, errorf("add blob: %w", err)
	}
	return out, created, nil
}

// BlobsDelete removes pubkey's ownership of a blob (every owner's when
// anyOwner, an operator's delete) in one transaction; the blob whose last
// owner goes is deleted and its bytes leave the community's stored total.
// owned is false when there was nothing of pubkey's to remove; gone says
// the blob row was deleted (its S3 object is then to be moved to trash).
func (s *Store) BlobsDelete(ctx context.Context, community, sha256, pubkey string, anyOwner bool) (owned, gone bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM blob_owners WHERE community_id = $1 AND sha256 = $2 AND ($4 OR pubkey = $3)`,
			community, sha256, pubkey, anyOwner)
		if err != nil {
			return err
		}
		if owned = tag.RowsAffected() > 0; !owned {
			return nil
		}
		var size int64
		err = tx.QueryRow(ctx, `DELETE FROM blobs b WHERE community_id = $1 AND sha256 = $2
  AND NOT EXISTS (SELECT 1 FROM blob_owners o WHERE o.community_id = $1 AND o.sha256 = $2)
RETURNING size`, community, sha256).Scan(&size)
		if notFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		gone = true
		_, err = tx.Exec(ctx, `UPDATE media_stored SET bytes = greatest(bytes - $2, 0) WHERE community_id = $1`, community, size)
		return err
	})
	if err != nil {
		return false, false, errorf("remove blob: %w", err)
	}
	return owned, gone, nil
}

// BlobsListByOwner lists the blobs pubkey uploaded to community, newest upload
// first, uploaded in [since, until] (0: unbounded), at most limit.
func (s *Store) BlobsListByOwner(ctx context.Context, community, pubkey string, since, until int64, limit int) ([]records.OwnedBlob, error) {
	rows, err := s.pool.Query(ctx, `SELECT b.sha256, b.size, b.type, b.created_at, o.uploaded_at
FROM blob_owners o JOIN blobs b ON b.community_id = o.community_id AND b.sha256 = o.sha256
WHERE o.community_id = $1 AND o.pubkey = $2 AND ($3 = 0 OR o.uploaded_at >= $3) AND ($4 = 0 OR o.uploaded_at <= $4)
ORDER BY o.uploaded_at DESC, b.sha256 LIMIT $5`, community, pubkey, since, until, limit)
	if err != nil {
		return nil, errorf("list blobs: %w", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow) (records.OwnedBlob, error) {
		var b records.OwnedBlob
		return b, r.Scan(&b.SHA256, &b.Size, &b.Type, &b.CreatedAt, &b.UploadedAt)
	})
	if err != nil {
		return nil, errorf("list blobs: %w", err)
	}
	return out, nil
}

// BlobUploadsInsert records a presigned upload awaiting completion.
func (s *Store) BlobUploadsInsert(ctx context.Context, u records.Upload) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO blob_uploads (community_id, upload_id, sha256, size, type, pubkey, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, u.Community, u.ID, u.SHA256, u.Size, u.Type, u.Pubkey, u.CreatedAt, u.ExpiresAt)
	if err != nil {
		return errorf("stage upload: %w", taken(err, "upload id "+u.ID))
	}
	return nil
}

// BlobUploadsList lists community's staged uploads of a hash, oldest first.
func (s *Store) BlobUploadsList(ctx context.Context, community, sha256 string) ([]records.Upload, error) {
	rows, err := s.pool.Query(ctx, `SELECT upload_id, size, type, pubkey, created_at, expires_at FROM blob_uploads
WHERE community_id = $1 AND sha256 = $2 ORDER BY created_at, upload_id LIMIT 16`, community, sha256)
	if err != nil {
		return nil, errorf("staged uploads: %w", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow) (records.Upload, error) {
		u := records.Upload{Community: community, SHA256: sha256}
		return u, r.Scan(&u.ID, &u.Size, &u.Type, &u.Pubkey, &u.CreatedAt, &u.ExpiresAt)
	})
	if err != nil {
		return nil, errorf("staged uploads: %w", err)
	}
	return out, nil
}

// BlobUploadsDelete forgets a staged upload.
func (s *Store) BlobUploadsDelete(ctx context.Context, community, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM blob_uploads WHERE community_id = $1 AND upload_id = $2`, community, id); err != nil {
		return errorf("drop upload: %w", err)
	}
	return nil
}

// MediaStoredGet is community's media as its operators see it: the
// bytes and blobs it stores, and the top keys by bytes uploaded on day
// (at most top of them, most first).
func (s *Store) MediaStoredGet(ctx context.Context, community string, day int64, top int) (stored, blobs int64, keys []records.KeyBytes, err error) {
	err = s.pool.QueryRow(ctx, `SELECT coalesce((SELECT bytes FROM media_stored WHERE community_id = $1), 0),
  (SELECT count(*) FROM blobs WHERE community_id = $1)`, community).Scan(&stored, &blobs)
	if err != nil {
		return 0, 0, nil, errorf("media usage of %s: %w", community, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT pubkey, bytes FROM media_key_days WHERE community_id = $1 AND day = $2
ORDER BY bytes DESC, pubkey LIMIT $3`, community, day, top)
	if err != nil {
		return 0, 0, nil, errorf("media usage of %s: %w", community, err)
	}
	keys, err = collect(rows, func(r pgx.CollectableRow) (records.KeyBytes, error) {
		var k records.KeyBytes
		return k, r.Scan(&k.Pubkey, &k.Bytes)
	})
	if err != nil {
		return 0, 0, nil, errorf("media usage of %s: %w", community, err)
	}
	return stored, blobs, keys, nil
}
