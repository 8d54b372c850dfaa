package records

import (
	"errors"
)

// Blob is a row of blobs.
type Blob struct {
	SHA256    string
	Size      int64
	Type      string
	CreatedAt int64
}

// OwnedBlob is a blob with when one key uploaded it (BUD-02 list).
type OwnedBlob struct {
	Blob
	UploadedAt int64
}

// Upload is a staged upload (blob_uploads): a presigned S3 PUT the relay
// completes.
type Upload struct {
	Community, ID, SHA256, Type, Pubkey string
	Size, CreatedAt, ExpiresAt          int64
}

// BlobAccess is one blob as a reader's request for it sees it.
type BlobAccess struct {
	// Blob is the community's blob; nil when it holds none.
	Blob *Blob
	// Staged: uploads of the hash are staged (presigned) and wait for the
	// relay to complete them.
	Staged bool
	// Owner: the reader is one of the blob's uploaders.
	Owner bool
	// Readable: the reader may read the blob: an owner, or a reader of one
	// of the events that reference it (the access rule, maySeeSQL, over
	// blob_refs, migrations/014), or anyone when no event references it.
	// A referencing event that is gone or deleted grants nobody but keeps
	// the blob a referenced one.
	Readable bool
}

// NewBlob is one upload to record.
type NewBlob struct {
	Community, SHA256, Type, Pubkey string
	Size, At                        int64
	// StoredLimit bounds the community's stored bytes (0: none).
	StoredLimit int64
	// Upload, when set, is the staged upload this completes: its row goes
	// in the same transaction.
	Upload string
}

// KeyBytes is what one key uploaded.
type KeyBytes struct {
	Pubkey string `json:"pubkey"`
	Bytes  int64  `json:"bytes"`
}

// Quota refusals: the write would pass a limit; nothing was changed.
var (
	ErrKeyDayQuota = errors.New("the key's media bytes per day would pass its limit")
	ErrStoredQuota = errors.New("the community's stored media bytes would pass its limit")
)
