package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/service/wire"
)

// openSessions builds the sessions' registry over the DynamoDB table
// SESSION_TABLE (no network call: the client connects on its first
// request; a community's first mark starts at the database's latest event
// when the function has the pool).
func (a *App) openSessions(ctx context.Context) error {
	if !a.Config.Session.On() {
		return errors.New("SESSION_TABLE is not set: the WebSocket sessions live in DynamoDB (the stack's table; make dev's local one, localdev/ddb.sh)")
	}
	c, err := ddbsessions.Client(ctx)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	a.Sessions = sessions.NewRegistry(ddbsessions.New(c, a.Config.Session.Table))
	if a.Store != nil {
		a.Sessions.Latest = a.Store.EventsGetLatestCreatedAt
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
func challenges(ctx context.Context, sg signer.Signer) (wire.Challenges, error) {
	sign := func() ([]byte, error) {
		ev := nostr.Event{Kind: 27235, Content: "buzz relay: NIP-42 challenge key", Tags: nostr.Tags{}}
		if err := sg.Sign(ctx, &ev); err != nil {
			return nil, fmt.Errorf("sessions: challenge key: %w", err)
		}
		return []byte(ev.Sig), nil
	}
	one, err := sign()
	if err != nil {
		return wire.Challenges{}, err
	}
	two, err := sign()
	if err != nil {
		return wire.Challenges{}, err
	}
	if !bytes.Equal(one, two) {
		return wire.Challenges{}, errors.New("sessions: the relay key's signatures are not deterministic, so the NIP-42 challenges cannot be derived from it")
	}
	k := sha256.Sum256(one)
	return wire.NewChallenges(k[:]), nil
}
