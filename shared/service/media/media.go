// Package media is the Blossom use cases of a community's media: who may
// upload, list and delete (decided at the door, shared/service/guard:
// members of any channel, the allow list, operators; keys banned or timed
// out now refused with blocked:), the per-key bytes-per-day and
// per-community bytes-stored quotas (Postgres, across instances), a blob
// stored once per community with the list of its owners, uploads through
// the function up to the direct limit and above it through a presigned S3
// PUT that the relay completes (streams the object, checks its size and
// SHA-256, copies it under blobs/, records it) on the next request for
// the hash, downloads as presigned S3 GETs, listing and deletion.
package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/guard"
)

// Objects is the media bucket (shared/aws/s3blobs.Bucket).
type Objects interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	// Head's found is false (err nil) for a key the bucket does not hold.
	Head(ctx context.Context, key string) (size int64, found bool, err error)
	Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	Copy(ctx context.Context, src, dst, contentType string) error
	Delete(ctx context.Context, key string) error
	PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (string, http.Header, error)
	PresignGet(ctx context.Context, key, contentType string, ttl time.Duration) (string, error)
}

// Service runs the media use cases.
type Service struct {
	Store   *store.Store
	Objects Objects
	Limits  blossom.Limits
	Log     *slog.Logger
	Now     func() time.Time
	// Guard is the door every upload, list and delete passes
	// (shared/service/guard: the community served, the NIP-43 gate, the
	// key's standing: banned or timed out now, a channel member). New
	// gives one over Store alone; the wiring's adds the communities.
	Guard *guard.Guard
}

// New builds the service.
func New(st *store.Store, objs Objects, l blossom.Limits, log *slog.Logger) *Service {
	return &Service{Store: st, Objects: objs, Limits: l, Log: log, Now: time.Now, Guard: &guard.Guard{Store: st, Log: log}}
}

// ListLimit bounds one BUD-02 list answer.
const ListLimit = 1000

// Claim is what an uploader announces: the hash, the size (-1: not
// announced) and the MIME type ("" none) of a blob for a community.
type Claim struct {
	Community, Pubkey, SHA256, Type string
	Size                            int64
}

// errStored refuses a blob the community's storage has no room for.
var errStored = blossom.Refuse(http.StatusRequestEntityTooLarge, reject.Restricted, "this community's media storage is full")

func dayQuota(limit int64) error {
	return blossom.Refuse(http.StatusTooManyRequests, reject.RateLimited, "over %s of uploads per day for this key; try again tomorrow (UTC)", blossom.HumanSize(limit))
}

// mayUpload passes pubkey's upload to community through the door.
func (s *Service) mayUpload(ctx context.Context, community, pubkey string) error {
	_, err := s.admit(ctx, community, pubkey, guard.Upload)
	return err
}

// admit passes pubkey's action on community's media through the door
// (shared/service/guard's table: which standing each action needs).
func (s *Service) admit(ctx context.Context, community, pubkey string, action guard.Action) (guard.Admitted, error) {
	a, err := s.Guard.Admit(ctx, guard.Door{Community: community, Caller: guard.Caller{Pubkey: pubkey}, Action: action})
	if err != nil {
		if _, ok := reject.As(err); ok {
			return a, err
		}
		return a, fmt.Errorf("media: %w", err)
	}
	return a, nil
}

// checkQuotas refuses a new blob of size that would pass either quota,
// without changing them (BUD-06 preflight, presign).
func (s *Service) checkQuotas(ctx context.Context, c Claim, newBlob bool) error {
	day, stored, err := s.Store.MediaUsage(ctx, c.Community, c.Pubkey, blossom.Day(s.Now()))
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	if l := s.Limits.KeyBytesPerDay; l > 0 && day+c.Size > l {
		return dayQuota(l)
	}
	if l := s.Limits.CommunityBytesStored; newBlob && l > 0 && stored+c.Size > l {
		return errStored
	}
	return nil
}

// existing is the community's blob of hash, nil when it holds none yet.
func (s *Service) existing(ctx context.Context, community, hash string) (*store.Blob, error) {
	b, err := s.Store.Blob(ctx, community, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return b, nil
}

// Preflight is BUD-06's HEAD /upload: would an upload of c be taken? A
// size above the direct limit is taken too (through Presign).
func (s *Service) Preflight(ctx context.Context, c Claim) error {
	if err := s.Limits.CheckSize(c.Size); err != nil {
		return err
	}
	if err := s.mayUpload(ctx, c.Community, c.Pubkey); err != nil {
		return err
	}
	b, err := s.existing(ctx, c.Community, c.SHA256)
	if err != nil {
		return err
	}
	return s.checkQuotas(ctx, c, b == nil)
}

// Upload stores body, sent through the function (at most DirectMaxBytes),
// as the blob c announces: its SHA-256 and size must match. A blob the
// community holds already is not stored again; the uploader becomes one of
// its owners. created is true when this upload stored it.
func (s *Service) Upload(ctx context.Context, c Claim, body []byte) (store.Blob, bool, error) {
	n := int64(len(body))
	if !s.Limits.Direct(n) {
		return store.Blob{}, false, blossom.Refuse(http.StatusRequestEntityTooLarge, reject.Invalid,
			"bodies above %d bytes cannot go through the relay: ask POST /media/upload for a presigned upload URL", s.Limits.DirectMaxBytes)
	}
	if err := s.Limits.CheckSize(n); err != nil {
		return store.Blob{}, false, err
	}
	if c.Size >= 0 && c.Size != n {
		return store.Blob{}, false, blossom.Refuse(http.StatusBadRequest, reject.Invalid, "the body is %d bytes, not the %d announced", n, c.Size)
	}
	if got := Hash(body); got != c.SHA256 {
		return store.Blob{}, false, blossom.Refuse(http.StatusConflict, reject.Invalid, "the body's SHA-256 is %s, not the announced %s", got, c.SHA256)
	}
	if err := s.mayUpload(ctx, c.Community, c.Pubkey); err != nil {
		return store.Blob{}, false, err
	}
	if err := s.charge(ctx, c.Community, c.Pubkey, n); err != nil {
		return store.Blob{}, false, err
	}
	b, err := s.existing(ctx, c.Community, c.SHA256)
	if err != nil {
		return store.Blob{}, false, err
	}
	if b == nil {
		if err := s.Objects.Put(ctx, blossom.BlobKey(c.Community, c.SHA256), body, typeOr(c.Type)); err != nil {
			return store.Blob{}, false, fmt.Errorf("media: %w", err)
		}
	}
	return s.record(ctx, c.Community, c.SHA256, c.Pubkey, n, typeOr(c.Type), "")
}

// charge counts n bytes against pubkey's day.
func (s *Service) charge(ctx context.Context, community, pubkey string, n int64) error {
	err := s.Store.ChargeKeyDay(ctx, community, pubkey, blossom.Day(s.Now()), n, s.Limits.KeyBytesPerDay)
	if errors.Is(err, store.ErrKeyDayQuota) {
		return dayQuota(s.Limits.KeyBytesPerDay)
	}
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	return nil
}

// record writes the blob's rows after its object is in place; when the
// community's storage is full, the object is removed again unless another
// upload recorded it meanwhile.
func (s *Service) record(ctx context.Context, community, hash, pubkey string, size int64, typ, upload string) (store.Blob, bool, error) {
	b, created, err := s.Store.AddBlob(ctx, store.NewBlob{Community: community, SHA256: hash, Type: typ, Pubkey: pubkey,
		Size: size, At: s.Now().Unix(), StoredLimit: s.Limits.CommunityBytesStored, Upload: upload})
	if errors.Is(err, store.ErrStoredQuota) {
		if held, herr := s.existing(ctx, community, hash); herr == nil && held == nil {
			s.remove(ctx, blossom.BlobKey(community, hash))
		}
		return store.Blob{}, false, errStored
	}
	if err != nil {
		return store.Blob{}, false, fmt.Errorf("media: %w", err)
	}
	return b, created, nil
}

// remove deletes an object, logging a failure (the bucket's lifecycle
// expires what is left under uploads/ and trash/).
func (s *Service) remove(ctx context.Context, key string) {
	if err := s.Objects.Delete(ctx, key); err != nil {
		s.Log.WarnContext(ctx, "media: delete object", "key", key, "err", err)
	}
}

func typeOr(t string) string {
	if t == "" {
		return blossom.DefaultType
	}
	return t
}

// Presigned is the answer to a large upload: PUT the bytes to URL with
// Headers before Expires; the relay completes the upload on the next
// request for the hash. Existing is set instead when the community already
// holds the blob (the uploader is added as an owner; nothing to send).
type Presigned struct {
	URL      string
	Headers  http.Header
	Expires  int64
	UploadID string
	Existing *store.Blob
}

// Presign stages an upload of c (its size announced) as a presigned S3
// PUT of uploads/<community>/<id>, charging its bytes to the key's day.
func (s *Service) Presign(ctx context.Context, c Claim) (Presigned, error) {
	if err := s.Limits.CheckSize(c.Size); err != nil {
		return Presigned{}, err
	}
	if err := s.mayUpload(ctx, c.Community, c.Pubkey); err != nil {
		return Presigned{}, err
	}
	b, err := s.existing(ctx, c.Community, c.SHA256)
	if err != nil {
		return Presigned{}, err
	}
	if b != nil {
		got, _, err := s.record(ctx, c.Community, c.SHA256, c.Pubkey, b.Size, b.Type, "")
		if err != nil {
			return Presigned{}, err
		}
		return Presigned{Existing: &got}, nil
	}
	if err := s.checkQuotas(ctx, c, true); err != nil {
		return Presigned{}, err
	}
	if err := s.charge(ctx, c.Community, c.Pubkey, c.Size); err != nil {
		return Presigned{}, err
	}
	now := s.Now()
	u := store.Upload{Community: c.Community, ID: uuid.NewString(), SHA256: c.SHA256, Type: typeOr(c.Type), Pubkey: c.Pubkey,
		Size: c.Size, CreatedAt: now.Unix(), ExpiresAt: now.Add(s.Limits.PresignTTL).Unix()}
	url, hdr, err := s.Objects.PresignPut(ctx, blossom.UploadKey(u.Community, u.ID), u.Size, u.Type, s.Limits.PresignTTL)
	if err != nil {
		return Presigned{}, fmt.Errorf("media: %w", err)
	}
	if err := s.Store.StageUpload(ctx, u); err != nil {
		return Presigned{}, fmt.Errorf("media: %w", err)
	}
	delete(hdr, "Host")
	return Presigned{URL: url, Headers: hdr, Expires: u.ExpiresAt, UploadID: u.ID}, nil
}

// Blob is the community's blob of hash, completing a staged upload of it
// when one has arrived in S3: blossom.ErrNotFound when there is none, a
// 409 when the only staged bytes did not match their claim (they are
// deleted, nothing is stored).
func (s *Service) Blob(ctx context.Context, community, hash string) (store.Blob, error) {
	b, err := s.existing(ctx, community, hash)
	if err != nil {
		return store.Blob{}, err
	}
	if b != nil {
		return *b, nil
	}
	return s.complete(ctx, community, hash)
}

// complete verifies and stores the first staged upload of hash whose
// bytes arrived and match.
func (s *Service) complete(ctx context.Context, community, hash string) (store.Blob, error) {
	ups, err := s.Store.StagedUploads(ctx, community, hash)
	if err != nil {
		return store.Blob{}, fmt.Errorf("media: %w", err)
	}
	var refusal error
	for _, u := range ups {
		key := blossom.UploadKey(community, u.ID)
		size, found, err := s.Objects.Head(ctx, key)
		if err != nil {
			return store.Blob{}, fmt.Errorf("media: %w", err)
		}
		if !found {
			if s.Now().Unix() > u.ExpiresAt {
				s.drop(ctx, u, false)
			}
			continue // not uploaded yet (or gone)
		}
		if size != u.Size {
			refusal = blossom.Refuse(http.StatusConflict, reject.Invalid, "the uploaded object is %d bytes, not the %d announced; it was discarded", size, u.Size)
			s.drop(ctx, u, true)
			continue
		}
		got, err := s.hashObject(ctx, key)
		if err != nil {
			return store.Blob{}, err
		}
		if got != hash {
			refusal = blossom.Refuse(http.StatusConflict, reject.Invalid, "the uploaded bytes hash to %s, not %s; they were discarded", got, hash)
			s.drop(ctx, u, true)
			continue
		}
		if err := s.Objects.Copy(ctx, key, blossom.BlobKey(community, hash), u.Type); err != nil {
			return store.Blob{}, fmt.Errorf("media: %w", err)
		}
		b, _, err := s.record(ctx, community, hash, u.Pubkey, u.Size, u.Type, u.ID)
		if err != nil {
			s.drop(ctx, u, true)
			return store.Blob{}, err
		}
		s.remove(ctx, key)
		return b, nil
	}
	if refusal != nil {
		return store.Blob{}, refusal
	}
	return store.Blob{}, blossom.ErrNotFound
}

// drop forgets a staged upload and, with object, deletes its bytes.
func (s *Service) drop(ctx context.Context, u store.Upload, object bool) {
	if object {
		s.remove(ctx, blossom.UploadKey(u.Community, u.ID))
	}
	if err := s.Store.DropUpload(ctx, u.Community, u.ID); err != nil {
		s.Log.WarnContext(ctx, "media: drop staged upload", "upload", u.ID, "err", err)
	}
}

// hashObject streams an object and returns its SHA-256.
func (s *Service) hashObject(ctx context.Context, key string) (string, error) {
	r, err := s.Objects.Open(ctx, key, 0, 0)
	if err != nil {
		return "", fmt.Errorf("media: %w", err)
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("media: read %s: %w", key, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Download is a presigned S3 GET of the community's blob of hash (S3
// serves the bytes and Range), with the blob.
func (s *Service) Download(ctx context.Context, community, hash string) (string, store.Blob, error) {
	b, err := s.Blob(ctx, community, hash)
	if err != nil {
		return "", b, err
	}
	url, err := s.Objects.PresignGet(ctx, blossom.BlobKey(community, hash), b.Type, s.Limits.PresignTTL)
	if err != nil {
		return "", b, fmt.Errorf("media: %w", err)
	}
	return url, b, nil
}

// List is BUD-02's list, for a member reader: the blobs pubkey uploaded
// to community, newest first, uploaded in [since, until] (0: unbounded).
func (s *Service) List(ctx context.Context, community, reader, pubkey string, since, until int64) ([]store.OwnedBlob, error) {
	if _, err := s.admit(ctx, community, reader, guard.ListMedia); err != nil {
		return nil, err
	}
	out, err := s.Store.BlobsOf(ctx, community, pubkey, since, until, ListLimit)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return out, nil
}

// Delete removes pubkey's upload of hash (an operator's: every upload of
// it). The blob whose last owner goes leaves the community's storage: its
// row first, then its object moves to trash/ (the bucket's lifecycle
// expires it).
func (s *Service) Delete(ctx context.Context, community, pubkey, hash string) error {
	m, err := s.admit(ctx, community, pubkey, guard.DeleteMedia)
	if err != nil {
		return err
	}
	owned, gone, err := s.Store.RemoveBlob(ctx, community, hash, pubkey, m.Operator)
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	if !owned {
		if b, err := s.existing(ctx, community, hash); err == nil && b != nil {
			return blossom.Refuse(http.StatusForbidden, reject.Restricted, "only the blob's uploaders and the community's operators may delete it")
		}
		return blossom.ErrNotFound
	}
	if gone {
		key := blossom.BlobKey(community, hash)
		if err := s.Objects.Copy(ctx, key, blossom.TrashKey(community, hash), ""); err != nil {
			s.Log.WarnContext(ctx, "media: move to trash", "key", key, "err", err)
		}
		s.remove(ctx, key)
	}
	return nil
}

// Hash is the lowercase hex SHA-256 of b.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
