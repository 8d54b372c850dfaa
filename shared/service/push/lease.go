package push

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
)

// NIP-PL leases (kind 30350): accepted only from their author (the relay's
// authorship rule: the event's key is the authenticated key), checked in
// the spec's order, decrypted with the community's executor key; a match
// sends the push gateway a NIP-98-signed wake that carries no content.

// ExecutorKeys is the NIP-PL executor key of each community: a secp256k1
// key sealed by the community sealer (KMS in AWS, the local key in make
// dev) under its own context (community id + "/push"), created once by the
// first instance that needs it, opened once per instance and kept.
type ExecutorKeys struct {
	Store  *store.Store
	Sealer community.Sealer

	mu   sync.Mutex
	keys map[string]*signer.Key
}

// sealContext keeps a community's executor key apart from its relay key
// under the same KMS key.
func sealContext(communityID string) string { return communityID + "/push" }

// For returns community's executor key, creating it on first use.
func (x *ExecutorKeys) For(ctx context.Context, communityID string) (*signer.Key, error) {
	x.mu.Lock()
	k := x.keys[communityID]
	x.mu.Unlock()
	if k != nil {
		return k, nil
	}
	if x.Sealer == nil {
		return nil, fmt.Errorf("push: no sealer for the executor key of %s", communityID)
	}
	ct, pub, err := x.Store.CommunitiesGetPushKey(ctx, communityID)
	if err != nil {
		return nil, err
	}
	if pub == "" {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("push: executor key: %w", err)
		}
		fresh, err := signer.FromHex(hex.EncodeToString(secret))
		if err != nil {
			return nil, err
		}
		sealed, err := x.Sealer.Seal(ctx, sealContext(communityID), secret)
		if err != nil {
			return nil, fmt.Errorf("push: seal the executor key of %s: %w", communityID, err)
		}
		if err := x.Store.CommunitiesSetPushKey(ctx, communityID, sealed, fresh.PublicKey()); err != nil {
			return nil, err
		}
		if ct, pub, err = x.Store.CommunitiesGetPushKey(ctx, communityID); err != nil {
			return nil, err
		}
	}
	k, err = x.Sealer.Open(ctx, sealContext(communityID), ct)
	if err != nil {
		return nil, fmt.Errorf("push: open the executor key of %s: %w", communityID, err)
	}
	if k.PublicKey() != pub {
		return nil, fmt.Errorf("push: the executor key of %s opens to %s, the row says %s", communityID, k.PublicKey(), pub)
	}
	x.mu.Lock()
	if x.keys == nil || len(x.keys) > 1024 {
		x.keys = map[string]*signer.Key{}
	}
	x.keys[communityID] = k
	x.mu.Unlock()
	return k, nil
}

// LeasesOn reports whether leases are served: a gateway and an executor.
func (s *Service) LeasesOn() bool { return s.Gateway != "" && s.Executor != nil }

// Origin is a community's canonical NIP-PL origin, which clients copy
// verbatim from the descriptor: wss:// and its first hostname, else
// BUZZ_PUBLIC_URL's host, else (a community served on any host, as make
// dev's) "buzz:" and its id. The tenant is always the community the
// event's connection or token resolved, never the lease's claim.
func Origin(c *community.Community, publicHost string) string {
	switch {
	case len(c.Hosts) > 0:
		return "wss://" + strings.ToLower(c.Hosts[0])
	case publicHost != "":
		return "wss://" + strings.ToLower(publicHost)
	}
	return "buzz:" + c.ID
}

// Descriptor is the NIP-11 push descriptor of community (nil when leases
// are off).
func (s *Service) Descriptor(ctx context.Context, c *community.Community, publicHost string) (*push.Descriptor, error) {
	if !s.LeasesOn() {
		return nil, nil
	}
	k, err := s.Executor.For(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	return push.NewDescriptor(Origin(c, publicHost), k.PublicKey(), s.Profiles), nil
}

// acceptLease applies NIP-PL's acceptance sequence after authorship (the
// use case's): public tags, the executor key and decryption, the schema,
// the origin, profile and filters, the quotas, then both orderings of a
// replacement (NIP-01's and the generation watermark). The first failure
// is the answer and changes nothing.
func (s *Service) acceptLease(ctx context.Context, tx *store.Tx, ev *nostr.Event, now int64) (*store.PushSubscription, error) {
	d, exp, exec, err := push.LeaseTags(ev, now)
	if err != nil {
		return nil, err
	}
	if exec != push.ExecutorKeyID {
		return nil, reject.Invalidf("unknown executor key")
	}
	if len(ev.Content) > push.MaxLeaseContent {
		return nil, reject.Invalidf("lease content is over %d bytes", push.MaxLeaseContent)
	}
	c, err := s.Communities.Serving(ctx, tx.Community())
	if err != nil {
		return nil, err
	}
	key, err := s.Executor.For(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	conv, err := key.ConversationKey(ev.PubKey)
	if err != nil {
		return nil, reject.Invalidf("undecryptable content")
	}
	plain, err := nip44.Decrypt(ev.Content, conv)
	if err != nil {
		return nil, reject.Invalidf("undecryptable content")
	}
	l, filters, ignore, err := push.ParseLease([]byte(plain), ev.PubKey, push.Executor{Origin: Origin(c, s.PublicHost), Profiles: s.Profiles})
	if err != nil {
		return nil, err
	}
	addr := store.PushAddress{Pubkey: ev.PubKey, Kind: kinds.PushLease, D: d}
	if l.Active {
		taken, err := tx.PushSubscriptionsExistsTarget(ctx, addr, l.Endpoint, now)
		if err != nil {
			return nil, err
		}
		if taken {
			return nil, reject.Invalidf("endpoint already leased")
		}
		n, err := tx.PushSubscriptionsCount(ctx, ev.PubKey, kinds.PushLease, d, now)
		if err != nil {
			return nil, err
		}
		if n >= push.MaxLeasesPerKey {
			return nil, reject.Invalidf("lease quota exceeded")
		}
	}
	// Replacement: NIP-01's order against the stored winner, then the
	// generation watermark (both locked by this transaction).
	if err := tx.EventsLockAddress(ctx, kinds.PushLease, ev.PubKey, d); err != nil {
		return nil, err
	}
	prev, err := tx.EventsListAddress(ctx, kinds.PushLease, ev.PubKey, d)
	if err != nil {
		return nil, err
	}
	for _, p := range prev {
		if p.ID != ev.ID && (p.CreatedAt > int64(ev.CreatedAt) || (p.CreatedAt == int64(ev.CreatedAt) && p.ID < ev.ID)) {
			return nil, reject.Invalidf("stale replacement")
		}
	}
	gen, found, err := tx.PushSubscriptionsGetGeneration(ctx, addr)
	if err != nil {
		return nil, err
	}
	if found && l.Generation <= gen {
		return nil, reject.Invalidf("stale generation")
	}
	row := &store.PushSubscription{
		Pubkey: ev.PubKey, Kind: kinds.PushLease, D: d, EventID: ev.ID,
		Generation: l.Generation, Active: l.Active, ExpiresAt: exp,
		Filters: json.RawMessage("[]"), Ignore: json.RawMessage("[]"),
	}
	if l.Active {
		row.Target = l.Endpoint
		if row.Filters, err = json.Marshal(filters); err != nil {
			return nil, fmt.Errorf("push: encode lease filters: %w", err)
		}
		if row.Ignore, err = json.Marshal(ignore); err != nil {
			return nil, fmt.Errorf("push: encode lease ignore filters: %w", err)
		}
	}
	return row, nil
}

// wake sends the gateway one wake for lease l: the endpoint grant, a
// request id and its expiry, signed by the community's relay key with
// NIP-98 (the gateway knows the relay by it). No event, channel, lease id
// or content leaves the relay.
func (s *Service) wake(ctx context.Context, community string, l *live) (outcome, error) {
	if s.Gateway == "" || s.Keys == nil {
		return failed, fmt.Errorf("no push gateway configured")
	}
	body, err := json.Marshal(push.NewWake(l.row.Target, uuid.NewString(), s.now().Unix()))
	if err != nil {
		return failed, fmt.Errorf("encode wake: %w", err)
	}
	sg, err := s.Keys.For(ctx, community)
	if err != nil {
		return failed, err
	}
	auth, err := nip98.Header(ctx, sg, http.MethodPost, s.Gateway, body, s.now().Unix())
	if err != nil {
		return failed, err
	}
	status, answer, err := s.dial(ctx, DialRequest{URL: s.Gateway, Body: body, Authorization: auth})
	if err == nil && status >= 200 && status < 300 {
		var r struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(answer, &r)
		switch r.Status {
		case "invalid_endpoint":
			return gone, fmt.Errorf("gateway: invalid endpoint")
		case "retry":
			return failed, fmt.Errorf("gateway: retry")
		}
		return delivered, nil
	}
	return classify(status, err)
}
