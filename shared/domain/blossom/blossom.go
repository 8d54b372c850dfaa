// Package blossom holds the Blossom rules (hzrd149/blossom BUD-01, 02, 06),
// pure: blob hashes and paths, the kind 24242 authorization event
// (auth.go), the blob descriptor, the media limits and their defaults, and
// the refusal that carries a BUD status code. No I/O: shared/service/media
// runs the use cases, shared/transport/blossom speaks HTTP.
package blossom

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// HashLen is the length of a blob's SHA-256 in lowercase hex.
const HashLen = 64

// MaxExtension bounds the file extension a blob URL may carry (".jpeg").
const MaxExtension = 10

// Limits are the media budgets; every one is read once from the
// environment (shared/wiring/config) over Defaults.
type Limits struct {
	// MaxBytes is the largest blob (MEDIA_MAX_BYTES).
	MaxBytes int64
	// DirectMaxBytes is the largest body a function takes in one request
	// (MEDIA_DIRECT_MAX_BYTES): Lambda's 6 MB invoke payload holds a
	// base64 body of about 4.5 MB. Larger blobs go through a presigned S3
	// upload the relay completes.
	DirectMaxBytes int64
	// KeyBytesPerDay bounds what one key uploads per UTC day
	// (MEDIA_KEY_BYTES_PER_DAY).
	KeyBytesPerDay int64
	// CommunityBytesStored bounds the bytes one community keeps
	// (MEDIA_COMMUNITY_BYTES_STORED).
	CommunityBytesStored int64
	// PresignTTL is how long a presigned S3 URL stays valid
	// (MEDIA_PRESIGN_TTL).
	PresignTTL time.Duration
}

// Defaults are the limits when the environment sets none.
var Defaults = Limits{
	MaxBytes:             100 << 20,
	DirectMaxBytes:       4 << 20,
	KeyBytesPerDay:       1 << 30,
	CommunityBytesStored: 10 << 30,
	PresignTTL:           15 * time.Minute,
}

// Refusal is a rejection with the HTTP status a Blossom client expects
// (413, 415, 404, 411, ...) where the prefix's own status (reject.Map)
// would be too coarse. It unwraps to its *reject.Error.
type Refusal struct {
	Status int
	Err    *reject.Error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse builds a Refusal; format follows fmt.Sprintf.
func Refuse(status int, p reject.Prefix, format string, args ...any) error {
	return &Refusal{Status: status, Err: reject.New(p, format, args...)}
}

// Status is the HTTP status of err: a Refusal's own, else reject.Map's.
func Status(err error) int {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Status
	}
	return reject.Map(err).Status
}

// ErrNotFound is the refusal of a blob the community does not hold.
var ErrNotFound = Refuse(http.StatusNotFound, reject.Invalid, "no blob with this hash is stored here")

// ParseHash checks that s is a blob hash: 64 lowercase hex characters.
func ParseHash(s string) (string, error) {
	if !eventcheck.LowerHex(s, HashLen) {
		return "", Refuse(http.StatusBadRequest, reject.Invalid, "a blob hash must be 64 lowercase hex characters")
	}
	return s, nil
}

// ParseBlobName splits "<sha256>[.ext]", the last segment of a blob URL,
// into the hash and the extension (without the dot, lowercase).
func ParseBlobName(name string) (hash, ext string, err error) {
	h, e, dotted := strings.Cut(name, ".")
	if hash, err = ParseHash(h); err != nil {
		return "", "", err
	}
	if dotted {
		if e == "" || len(e) > MaxExtension || !alnum(e) {
			return "", "", Refuse(http.StatusBadRequest, reject.Invalid, "a blob's file extension must be 1 to %d letters or digits", MaxExtension)
		}
		ext = strings.ToLower(e)
	}
	return hash, ext, nil
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// MaxTypeLength bounds a declared MIME type.
const MaxTypeLength = 127

// ParseType checks a declared MIME type ("" is none: stored as
// application/octet-stream): a type/subtype, parameters dropped, lowercase.
// A malformed one is a 415.
func ParseType(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	mt, _, err := mime.ParseMediaType(s)
	if err != nil || len(mt) > MaxTypeLength || !strings.Contains(mt, "/") {
		return "", Refuse(http.StatusUnsupportedMediaType, reject.Invalid, "the content type must be a MIME type such as image/png")
	}
	return strings.ToLower(mt), nil
}

// DefaultType is the type of a blob uploaded without one.
const DefaultType = "application/octet-stream"

// servedTypes are the types a blob is served with as declared: passive
// media a browser shows without running anything. SVG, HTML, XML,
// JavaScript and every other type are not among them.
var servedTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"image/heic": true, "image/heif": true, "image/bmp": true,
	"video/mp4": true, "video/webm": true, "video/quicktime": true, "video/ogg": true, "video/mpeg": true,
	"audio/mpeg": true, "audio/ogg": true, "audio/wav": true, "audio/mp4": true, "audio/webm": true,
	"audio/aac": true, "audio/flac": true, "audio/opus": true,
	"application/pdf": true,
}

// Served is how a blob of declared type typ is served (GET's redirect and
// HEAD): its type when it is one of the safe ones, shown inline; any
// other as DefaultType, as an attachment, so what an uploader labels
// text/html or image/svg+xml is downloaded, never rendered. Every answer
// also carries X-Content-Type-Options: nosniff (NoSniff).
func Served(typ string) (contentType, disposition string) {
	if servedTypes[typ] {
		return typ, "inline"
	}
	return DefaultType, "attachment"
}

// NoSniff is the X-Content-Type-Options value of every media answer.
const NoSniff = "nosniff"

// CheckSize checks a blob's announced or actual size against the limits:
// a 411 without one (size < 0), a 413 above MaxBytes, a 400 for an empty
// blob.
func (l Limits) CheckSize(size int64) error {
	switch {
	case size < 0:
		return Refuse(http.StatusLengthRequired, reject.Invalid, "the blob's size is required (X-Content-Length)")
	case size == 0:
		return Refuse(http.StatusBadRequest, reject.Invalid, "the blob is empty")
	case size > l.MaxBytes:
		return Refuse(http.StatusRequestEntityTooLarge, reject.Invalid, "the blob is %d bytes; the largest this relay stores is %d bytes", size, l.MaxBytes)
	}
	return nil
}

// Direct reports whether a blob of size goes through the function in one
// request (else through a presigned upload).
func (l Limits) Direct(size int64) bool { return size <= l.DirectMaxBytes }

// Descriptor is BUD-02's blob descriptor.
type Descriptor struct {
	URL      string `json:"url"`
	SHA256   string `json:"sha256"`
	Size     int64  `json:"size"`
	Type     string `json:"type,omitempty"`
	Uploaded int64  `json:"uploaded"`
}

// Describe builds the descriptor of a blob served at base (scheme://host).
func Describe(base, hash string, size int64, typ string, uploaded int64) Descriptor {
	return Descriptor{URL: base + "/" + hash + Extension(typ), SHA256: hash, Size: size, Type: typ, Uploaded: uploaded}
}

// extensions are the file extensions blob URLs get for common types; any
// other type gets none (BUD-01: the extension is optional).
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
	"image/svg+xml": ".svg", "image/avif": ".avif", "video/mp4": ".mp4", "video/webm": ".webm",
	"video/quicktime": ".mov", "audio/mpeg": ".mp3", "audio/ogg": ".ogg", "audio/wav": ".wav",
	"audio/mp4": ".m4a", "application/pdf": ".pdf", "text/plain": ".txt", "application/zip": ".zip",
	"application/json": ".json",
}

// Extension is the file extension (with its dot) of a blob URL of type typ.
func Extension(typ string) string { return extensions[typ] }

// Keys are the S3 object keys of a community's media: one object per blob
// however many keys uploaded it, a staged upload awaiting completion, a
// deleted blob (kept by the bucket's lifecycle a while, then expired).
func BlobKey(community, hash string) string { return "blobs/" + community + "/" + hash }

// UploadKey is the S3 key of a staged (presigned) upload.
func UploadKey(community, id string) string { return "uploads/" + community + "/" + id }

// TrashKey is the S3 key a deleted blob is moved to.
func TrashKey(community, hash string) string { return "trash/" + community + "/" + hash }

// Day is the UTC day number of t, the window of the bytes-per-day quota.
func Day(t time.Time) int64 { return t.Unix() / 86400 }

// HumanSize spells a byte count for people (refusals): whole GiB or MiB, else bytes.
func HumanSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
