package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/service/sessions"
)

// openIdle builds the sessions' idle state over SESSION_BUCKET (no network
// call: the S3 client connects on its first request). Its challenge key
// is derived from the relay key where the function has one (ws-message):
// a BIP-340 signature over a fixed event, deterministic (RFC 6979 nonces),
// the same on every instance and known to no client.
func (a *App) openIdle(ctx context.Context) error {
	s := a.Config.Session
	bucket, err := s3blobs.Open(ctx, a.Config.AWSRegion, s.Bucket, s.Endpoint)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	var key []byte
	if a.Keys != nil {
		if key, err = a.challengeKey(ctx); err != nil {
			return err
		}
	}
	a.Idle = sessions.NewIdle(bucket, s.Prefix, key)
	a.Idle.Latest = a.Store.LatestCreatedAt
	return nil
}

// challengeKey is the MAC key of the NIP-42 challenges (openIdle).
func (a *App) challengeKey(ctx context.Context) ([]byte, error) {
	sign := func() ([]byte, error) {
		ev := nostr.Event{Kind: 27235, Content: "buzz relay: NIP-42 challenge key", Tags: nostr.Tags{}}
		if err := a.Keys.Sign(ctx, &ev); err != nil {
			return nil, fmt.Errorf("sessions: challenge key: %w", err)
		}
		return []byte(ev.Sig), nil
	}
	one, err := sign()
	if err != nil {
		return nil, err
	}
	two, err := sign()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(one, two) {
		return nil, errors.New("sessions: the relay key's signatures are not deterministic; set no SESSION_BUCKET")
	}
	k := sha256.Sum256(one)
	return k[:], nil
}
