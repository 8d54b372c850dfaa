// Package media is the Blossom use cases of a community's media: who may
// upload, list and delete (decided at the door, shared/service/guard:
// members of any channel, the allow list, operators; keys banned or timed
// out now refused with blocked:), the per-key bytes-per-day and
// per-community bytes-stored quotas (Postgres, across instances), a blob
// stored once per community with the list of its owners (the keys that
// sent its bytes), uploads through the function up to the direct limit and
// above it through a presigned S3 PUT bound to the claimed SHA-256 that the
// relay completes (streams the object, checks its size and SHA-256, copies
// the version it read under blobs/, records the uploader) on the next
// request for the hash, reads by the blob's owners and by the readers of
// the events that share it (anyone when none does or one is public),
// downloads as presigned S3 GETs with a safe served type, a key's own
// listing, and deletion.
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
	"github.com/buzzrelay/relay/shared/domain/records"
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
	// OpenVersion streams a whole object with its version (ETag).
	OpenVersion(ctx context.Context, key string) (io.ReadCloser, string, error)
	Copy(ctx context.Context, src, dst, contentType string) error
	// CopyVersion copies src to dst only while src is still version (an
	// ETag OpenVersion returned): copied is false (err nil) when src was
	// replaced since.
	CopyVersion(ctx context.Context, src, dst, contentType, version string) (copied bool, err error)
	Delete(ctx context.Context, key string) error
	// PresignPut is a PUT URL of exactly size bytes hashing to sha256Hex.
	PresignPut(ctx context.Context, key string, size int64, contentType, sha256Hex string, ttl time.Duration) (string, http.Header, error)
	// PresignGet is a GET URL answered with contentType and disposition.
	PresignGet(ctx context.Context, key, contentType, disposition string, ttl time.Duration) (string, error)
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

// Errors the service refuses with; each carries its BUD status.
var (
	errStored = blossom.Refuse(http.StatusRequestEntityTooLarge, reject.Restricted, "this community's media storage is full")
	// errNotOwner answers a delete by a key that owns no upload of the
	// hash, whether the community holds the blob or not.
	errNotOwner = blossom.Refuse(http.StatusForbidden, reject.Restricted, "this key has no upload of this blob to delete; only a blob's uploaders and the community's operators may delete it")
)

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
	day, stored, err := s.Store.MediaUsageGet(ctx, c.Community, c.Pubkey, blossom.Day(s.Now()))
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
func (s *Service) existing(ctx context.Context, community, hash string) (*records.Blob, error) {
	b, err := s.Store.BlobsGet(ctx, community, hash)
	if errors.Is(err, records.ErrNotFound) {
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
func (s *Service) Upload(ctx context.Context, c Claim, body []byte) (records.Blob, bool, error) {
	n := int64(len(body))
	if !s.Limits.Direct(n) {
		return records.Blob{}, false, blossom.Refuse(http.StatusRequestEntityTooLarge, reject.Invalid,
			"bodies above %d bytes cannot go through the relay: ask POST /media/upload for a presigned upload URL", s.Limits.DirectMaxBytes)
	}
	if err := s.Limits.CheckSize(n); err != nil {
		return records.Blob{}, false, err
	}
	if c.Size >= 0 && c.Size != n {
		return records.Blob{}, false, blossom.Refuse(http.StatusBadRequest, reject.Invalid, "the body is %d bytes, not the %d announced", n, c.Size)
	}
	if got := Hash(body); got != c.SHA256 {
		return records.Blob{}, false, blossom.Refuse(http.StatusConflict, reject.Invalid, "the body's SHA-256 is %s, not the announced %s", got, c.SHA256)
	}
	if err := s.mayUpload(ctx, c.Community, c.Pubkey); err != nil {
		return records.Blob{}, false, err
	}
	if err := s.charge(ctx, c.Community, c.Pubkey, n); err != nil {
		return records.Blob{}, false, err
	}
	b, err := s.existing(ctx, c.Community, c.SHA256)
	if err != nil {
		return records.Blob{}, false, err
	}
	if b == nil {
		if err := s.Objects.Put(ctx, blossom.BlobKey(c.Community, c.SHA256), body, typeOr(c.Type)); err != nil {
			return records.Blob{}, false, fmt.Errorf("media: %w", err)
		}
	}
	return s.record(ctx, c.Community, c.SHA256, c.Pubkey, n, typeOr(c.Type), "")
}

// charge counts n bytes against pubkey's day.
func (s *Service) charge(ctx context.Context, community, pubkey string, n int64) error {
	err := s.Store.MediaKeyDaysAdd(ctx, community, pubkey, blossom.Day(s.Now()), n, s.Limits.KeyBytesPerDay)
	if errors.Is(err, records.ErrKeyDayQuota) {
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
func (s *Service) record(ctx context.Context, community, hash, pubkey string, size int64, typ, upload string) (records.Blob, bool, error) {
	b, created, err := s.Store.BlobsInsert(ctx, records.NewBlob{Community: community, SHA256: hash, Type: typ, Pubkey: pubkey,
		Size: size, At: s.Now().Unix(), StoredLimit: s.Limits.CommunityBytesStored, Upload: upload})
	if errors.Is(err, records.ErrStoredQuota) {
		if held, herr := s.existing(ctx, community, hash); herr == nil && held == nil {
			s.remove(ctx, blossom.BlobKey(community, hash))
		}
		return records.Blob{}, false, errStored
	}
	if err != nil {
		return records.Blob{}, false, fmt.Errorf("media: %w", err)
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
// request for the hash. Existing is set instead when the uploader already
// owns the blob (nothing to send).
type Presigned struct {
	URL      string
	Headers  http.Header
	Expires  int64
	UploadID string
	Existing *records.Blob
}

// Presign stages an upload of c (its size announced) as a presigned S3
// PUT of uploads/<community>/<id> bound to the claimed SHA-256, charging
// its bytes to the key's day. A blob the community holds already is
// staged the same way: a key becomes an owner by sending the bytes, never
// by naming a hash (the completion adds it once the bytes match).
func (s *Service) Presign(ctx context.Context, c Claim) (Presigned, error) {
	if err := s.Limits.CheckSize(c.Size); err != nil {
		return Presigned{}, err
	}
	if err := s.mayUpload(ctx, c.Community, c.Pubkey); err != nil {
		return Presigned{}, err
	}
	a, err := s.Store.BlobsGetAccess(ctx, c.Community, c.SHA256, c.Pubkey)
	if err != nil {
		return Presigned{}, fmt.Errorf("media: %w", err)
	}
	if a.Blob != nil && a.Owner {
		return Presigned{Existing: a.Blob}, nil
	}
	if err := s.checkQuotas(ctx, c, a.Blob == nil); err != nil {
		return Presigned{}, err
	}
	if err := s.charge(ctx, c.Community, c.Pubkey, c.Size); err != nil {
		return Presigned{}, err
	}
	now := s.Now()
	u := records.Upload{Community: c.Community, ID: uuid.NewString(), SHA256: c.SHA256, Type: typeOr(c.Type), Pubkey: c.Pubkey,
		Size: c.Size, CreatedAt: now.Unix(), ExpiresAt: now.Add(s.Limits.PresignTTL).Unix()}
	url, hdr, err := s.Objects.PresignPut(ctx, blossom.UploadKey(u.Community, u.ID), u.Size, u.Type, u.SHA256, s.Limits.PresignTTL)
	if err != nil {
		return Presigned{}, fmt.Errorf("media: %w", err)
	}
	if err := s.Store.BlobUploadsInsert(ctx, u); err != nil {
		return Presigned{}, fmt.Errorf("media: %w", err)
	}
	delete(hdr, "Host")
	return Presigned{URL: url, Headers: hdr, Expires: u.ExpiresAt, UploadID: u.ID}, nil
}

// access is the blob of hash as reader sees it, after completing the
// staged uploads of it whose bytes arrived; refused holds the refusal of
// each uploader whose staged bytes did not match their claim.
func (s *Service) access(ctx context.Context, community, hash, reader string) (records.BlobAccess, map[string]error, error) {
	a, err := s.Store.BlobsGetAccess(ctx, community, hash, reader)
	if err != nil {
		return a, nil, fmt.Errorf("media: %w", err)
	}
	if !a.Staged {
		return a, nil, nil
	}
	refused, err := s.complete(ctx, community, hash, a.Blob != nil)
	if err != nil {
		return a, nil, err
	}
	if a, err = s.Store.BlobsGetAccess(ctx, community, hash, reader); err != nil {
		return a, nil, fmt.Errorf("media: %w", err)
	}
	return a, refused, nil
}

// Read is the community's blob of hash for reader ("" for a request
// without a key): blossom.ErrNotFound when the community holds none or
// when reader may not read it (records.BlobAccess.Readable), the same
// answer for both. It completes staged uploads of the hash first.
func (s *Service) Read(ctx context.Context, community, reader, hash string) (records.Blob, error) {
	if _, err := s.admit(ctx, community, reader, guard.ReadMedia); err != nil {
		return records.Blob{}, err
	}
	a, _, err := s.access(ctx, community, hash, reader)
	if err != nil {
		return records.Blob{}, err
	}
	if a.Blob == nil || !a.Readable {
		return records.Blob{}, blossom.ErrNotFound
	}
	return *a.Blob, nil
}

// Complete is an uploader's own completion of its presigned upload of
// hash: the blob once pubkey owns it; a 409 when pubkey's staged bytes did
// not match its claim (they are deleted, nothing is stored);
// blossom.ErrNotFound otherwise (nothing of pubkey's has arrived), whoever
// else holds the blob.
func (s *Service) Complete(ctx context.Context, community, pubkey, hash string) (records.Blob, error) {
	a, refused, err := s.access(ctx, community, hash, pubkey)
	if err != nil {
		return records.Blob{}, err
	}
	if a.Blob != nil && a.Owner {
		return *a.Blob, nil
	}
	if err := refused[pubkey]; err != nil {
		return records.Blob{}, err
	}
	return records.Blob{}, blossom.ErrNotFound
}

// complete verifies the staged uploads of hash whose bytes arrived: the
// first that matches stores the blob when held is false, and each that
// matches makes its uploader an owner. A staged object is read once to
// hash it and then copied only as the version that was read (the copy's
// ETag condition), so bytes put to the presigned URL meanwhile are never
// what the blob holds; such an upload is refused like a mismatch.
func (s *Service) complete(ctx context.Context, community, hash string, held bool) (map[string]error, error) {
	ups, err := s.Store.BlobUploadsList(ctx, community, hash)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	refused := map[string]error{}
	refuse := func(u records.Upload, format string, args ...any) {
		refused[u.Pubkey] = blossom.Refuse(http.StatusConflict, reject.Invalid, format, args...)
		s.drop(ctx, u, true)
	}
	for _, u := range ups {
		key := blossom.UploadKey(community, u.ID)
		size, found, err := s.Objects.Head(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("media: %w", err)
		}
		if !found {
			if s.Now().Unix() > u.ExpiresAt {
				s.drop(ctx, u, false)
			}
			continue // not uploaded yet (or gone)
		}
		if size != u.Size {
			refuse(u, "the uploaded object is %d bytes, not the %d announced; it was discarded", size, u.Size)
			continue
		}
		got, version, err := s.hashObject(ctx, key)
		if err != nil {
			return nil, err
		}
		if got != hash {
			refuse(u, "the uploaded bytes hash to %s, not %s; they were discarded", got, hash)
			continue
		}
		if !held {
			copied, err := s.Objects.CopyVersion(ctx, key, blossom.BlobKey(community, hash), u.Type, version)
			if err != nil {
				return nil, fmt.Errorf("media: %w", err)
			}
			if !copied {
				refuse(u, "the uploaded object changed while the relay checked it; it was discarded, upload it again")
				continue
			}
		}
		if _, _, err := s.record(ctx, community, hash, u.Pubkey, u.Size, u.Type, u.ID); err != nil {
			s.drop(ctx, u, true)
			return nil, err
		}
		held = true
		s.remove(ctx, key)
	}
	return refused, nil
}

// drop forgets a staged upload and, with object, deletes its bytes.
func (s *Service) drop(ctx context.Context, u records.Upload, object bool) {
	if object {
		s.remove(ctx, blossom.UploadKey(u.Community, u.ID))
	}
	if err := s.Store.BlobUploadsDelete(ctx, u.Community, u.ID); err != nil {
		s.Log.WarnContext(ctx, "media: drop staged upload", "upload", u.ID, "err", err)
	}
}

// hashObject streams an object and returns its SHA-256 and the version
// (ETag) it read.
func (s *Service) hashObject(ctx context.Context, key string) (string, string, error) {
	r, version, err := s.Objects.OpenVersion(ctx, key)
	if err != nil {
		return "", "", fmt.Errorf("media: %w", err)
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", "", fmt.Errorf("media: read %s: %w", key, err)
	}
	return hex.EncodeToString(h.Sum(nil)), version, nil
}

// Download is a presigned S3 GET of the community's blob of hash for
// reader (Read's rule), S3 answering with the blob's served type and
// disposition (blossom.Served), with the blob.
func (s *Service) Download(ctx context.Context, community, reader, hash string) (string, records.Blob, error) {
	b, err := s.Read(ctx, community, reader, hash)
	if err != nil {
		return "", b, err
	}
	typ, disposition := blossom.Served(b.Type)
	url, err := s.Objects.PresignGet(ctx, blossom.BlobKey(community, hash), typ, disposition, s.Limits.PresignTTL)
	if err != nil {
		return "", b, fmt.Errorf("media: %w", err)
	}
	return url, b, nil
}

// errOthersList refuses a list of another key's blobs, whatever that key
// holds.
var errOthersList = blossom.Refuse(http.StatusForbidden, reject.Restricted, "a key may list only its own blobs here")

// List is BUD-02's list of reader's own blobs (pubkey must be reader; any
// other key is refused alike, so a list reveals nothing of another key's
// uploads, shared in private channels or not), newest first, uploaded in
// [since, until] (0: unbounded), for a member reader.
func (s *Service) List(ctx context.Context, community, reader, pubkey string, since, until int64) ([]records.OwnedBlob, error) {
	if _, err := s.admit(ctx, community, reader, guard.ListMedia); err != nil {
		return nil, err
	}
	if pubkey != reader {
		return nil, errOthersList
	}
	out, err := s.Store.BlobsListByOwner(ctx, community, pubkey, since, until, ListLimit)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return out, nil
}

// Delete removes pubkey's upload of hash (an operator's: every upload of
// it). The blob whose last owner goes leaves the community's storage: its
// row first, then its object moves to trash/ (the bucket's lifecycle
// expires it). A key with no upload of hash is refused the same way
// whether the community holds the blob or not.
func (s *Service) Delete(ctx context.Context, community, pubkey, hash string) error {
	m, err := s.admit(ctx, community, pubkey, guard.DeleteMedia)
	if err != nil {
		return err
	}
	owned, gone, err := s.Store.BlobsDelete(ctx, community, hash, pubkey, m.Operator)
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	if !owned {
		if m.Operator {
			return blossom.ErrNotFound
		}
		return errNotOwner
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

// EraseVanished deletes the objects of the blobs and staged uploads a
// request to vanish (NIP-62) removed once its transaction committed
// (store.Tx.KeyDataDelete): deleted, not moved to trash/, as the key
// asked. A failed delete is logged.
func (s *Service) EraseVanished(ctx context.Context, community string, v store.Vanished) {
	for _, h := range v.Blobs {
		s.remove(ctx, blossom.BlobKey(community, h))
	}
	for _, id := range v.Uploads {
		s.remove(ctx, blossom.UploadKey(community, id))
	}
}

// Hash is the lowercase hex SHA-256 of b.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
