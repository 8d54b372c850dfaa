package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/service/sessions"
)

// openIdle builds the sessions' idle state over SESSION_BUCKET (no network
// call: the S3 client connects on its first request), the challenges of
// the connections it folds keyed as everywhere (a.Challenges).
func (a *App) openIdle(ctx context.Context) error {
	s := a.Config.Session
	bucket, err := s3blobs.Open(ctx, a.Config.AWSRegion, s.Bucket, s.Endpoint)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	a.Idle = sessions.NewIdle(bucket, s.Prefix, a.Challenges)
	if a.Store != nil {
		a.Idle.Latest = a.Store.LatestCreatedAt
	}
	return nil
}

// openDirectory builds the directory of what each host serves over its
// bucket (no network call: the S3 client connects on its first request).
func (a *App) openDirectory(ctx context.Context) error {
	var err error
	a.Directory, err = a.Config.OpenDirectory(ctx, a.Store)
	return err
}

// challenges keys the NIP-42 challenges with the relay key sg (the default
// community's): a BIP-340 signature over a fixed event, deterministic (RFC
// 6979 nonces), the same on every instance and in every function that
// loads the key (ws-message, ws-push), known to no client.
func challenges(ctx context.Context, sg signer.Signer) (sessions.Challenges, error) {
	sign := func() ([]byte, error) {
		ev := nostr.Event{Kind: 27235, Content: "buzz relay: NIP-42 challenge key", Tags: nostr.Tags{}}
		if err := sg.Sign(ctx, &ev); err != nil {
			return nil, fmt.Errorf("sessions: challenge key: %w", err)
		}
		return []byte(ev.Sig), nil
	}
	one, err := sign()
	if err != nil {
		return sessions.Challenges{}, err
	}
	two, err := sign()
	if err != nil {
		return sessions.Challenges{}, err
	}
	if !bytes.Equal(one, two) {
		return sessions.Challenges{}, errors.New("sessions: the relay key's signatures are not deterministic, so the NIP-42 challenges cannot be derived from it")
	}
	k := sha256.Sum256(one)
	return sessions.NewChallenges(k[:]), nil
}
