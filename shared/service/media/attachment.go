package media

import (
	"context"
	"fmt"
	"io"

	"github.com/buzzrelay/relay/shared/domain/blossom"
)

// Stream is a blob handed to the relay's front (CloudFront's edge
// function, the emulator's front) to stream from the bucket to the client
// on the request that asked for it: a presigned GET of the blob, S3
// answering with Type and Disposition.
type Stream struct {
	URL               string
	Type, Disposition string
	Size              int64
}

// Attachment is the community's blob of hash as an operator's feedback
// attachment (the admin API's GET /api/admin/v1/feedback/{id}/attachments/
// {sha256}, whose caller and whose feedback the admin route has checked):
// served as the type its first bytes show (blossom.Sniffed: a PNG, JPEG,
// GIF or WebP inline, anything else a download, whatever the submitter
// labelled it), as Buzz's relay serves it. blossom.ErrNotFound when the
// community holds no such blob. Staged uploads of hash are completed
// first, as for any read.
func (s *Service) Attachment(ctx context.Context, community, hash string) (Stream, error) {
	a, _, err := s.access(ctx, community, hash, "")
	if err != nil {
		return Stream{}, err
	}
	if a.Blob == nil {
		return Stream{}, blossom.ErrNotFound
	}
	key := blossom.BlobKey(community, hash)
	n := min(a.Blob.Size, blossom.SniffLen)
	r, err := s.Objects.Open(ctx, key, 0, n)
	if err != nil {
		return Stream{}, fmt.Errorf("media: %w", err)
	}
	prefix, err := io.ReadAll(io.LimitReader(r, n))
	_ = r.Close()
	if err != nil {
		return Stream{}, fmt.Errorf("media: read %s: %w", key, err)
	}
	typ, disposition := blossom.Sniffed(prefix)
	url, err := s.Objects.PresignGet(ctx, key, typ, disposition, s.Limits.PresignTTL)
	if err != nil {
		return Stream{}, fmt.Errorf("media: %w", err)
	}
	return Stream{URL: url, Type: typ, Disposition: disposition, Size: a.Blob.Size}, nil
}
