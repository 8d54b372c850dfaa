package app

import (
	"context"
	"fmt"

	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/transport/blossom"
	"github.com/buzzrelay/relay/shared/transport/bridge"
)

// openMedia builds the media service over MEDIA_BUCKET (no network call:
// the S3 client connects on its first request).
func (a *App) openMedia(ctx context.Context) error {
	m := a.Config.Media
	bucket, err := s3blobs.Open(ctx, a.Config.AWSRegion, m.Bucket, m.Endpoint)
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	a.Media = media.New(a.Store, bucket, m.Limits, a.Log)
	a.Media.Guard = a.Guard
	return nil
}

// attachMedia hooks the Blossom routes of side into b, and NIP-11's media
// block; nothing when media is off.
func (a *App) attachMedia(b *bridge.Bridge, side blossom.Side) {
	if a.Media == nil {
		return
	}
	c := &blossom.Codec{Media: a.Media, Communities: a.Communities, NIP98: b.Verifier, Sigs: a.Sigs, Side: side, Log: a.Log}
	b.Media = c.Serve
	l := a.Media.Limits
	b.MediaInfo = &relayinfo.Media{Endpoints: relayinfo.MediaEndpoints, MaxBlobBytes: l.MaxBytes, DirectUploadMaxBytes: l.DirectMaxBytes,
		KeyBytesPerDay: l.KeyBytesPerDay, CommunityBytesStored: l.CommunityBytesStored,
		PresignSeconds: int64(l.PresignTTL.Seconds()), Uploaders: "members of the community's channels"}
}
