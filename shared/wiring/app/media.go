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

// mediaCodec is the media routes' codec over a.Media, its NIP-98 tokens
// checked by b's verifier; nil when media is off.
func (a *App) mediaCodec(b *bridge.Bridge) *blossom.Codec {
	if a.Media == nil {
		return nil
	}
	return &blossom.Codec{Media: a.Media, Communities: a.Communities, NIP98: b.Verifier, Sigs: a.Sigs, Log: a.Log}
}

// mediaInfo is what NIP-11 says of media; nil when media is off.
func (a *App) mediaInfo() *relayinfo.Media {
	if a.Media == nil {
		return nil
	}
	l := a.Media.Limits
	return &relayinfo.Media{Endpoints: relayinfo.MediaEndpoints, MaxBlobBytes: l.MaxBytes, DirectUploadMaxBytes: l.DirectMaxBytes,
		KeyBytesPerDay: l.KeyBytesPerDay, CommunityBytesStored: l.CommunityBytesStored,
		PresignSeconds: int64(l.PresignTTL.Seconds()), Uploaders: "members of the community's channels"}
}
