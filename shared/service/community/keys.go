package community

import (
	"context"
	"fmt"
	"sync"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/signer"
)

// Keys is the relay key of every community: a signer.Keyring. A
// community's key is opened (one KMS Decrypt) on its first use by this
// instance and kept, at most maxCached of them; a rotated key has a new
// pubkey and is opened afresh. The default community without a stored key
// of its own signs with the configured relay key (RELAY_SECRET_KEY, the key
// file, or RELAY_KEY_CIPHERTEXT), as does any community whose stored
// pubkey is that key's.
type Keys struct {
	reg    *Registry
	sealer Sealer // nil: only the configured key is available
	def    signer.Signer

	mu   sync.Mutex
	keys map[string]*signer.Key // community id + "/" + pubkey
	// Opens counts KMS (or local) decryptions, for tests and logs.
	opens int
}

// NewKeys builds the keyring; sealer may be nil.
func NewKeys(reg *Registry, sealer Sealer, def signer.Signer) *Keys {
	return &Keys{reg: reg, sealer: sealer, def: def, keys: map[string]*signer.Key{}}
}

// PublicKey is the default community's relay pubkey.
func (k *Keys) PublicKey() string { return k.def.PublicKey() }

// Sign signs for the default community.
func (k *Keys) Sign(ctx context.Context, ev *nostr.Event) error { return k.def.Sign(ctx, ev) }

// For returns community id's signer.
func (k *Keys) For(ctx context.Context, id string) (signer.Signer, error) {
	c, err := k.reg.byID(ctx, id)
	if err != nil {
		return nil, err
	}
	return k.ForCommunity(ctx, c)
}

// ForCommunity returns c's signer.
func (k *Keys) ForCommunity(ctx context.Context, c *Community) (signer.Signer, error) {
	if c.RelayPubkey == "" || c.RelayPubkey == k.def.PublicKey() {
		if c.ID == k.reg.Fallback() || c.RelayPubkey != "" {
			return k.def, nil
		}
		return nil, fmt.Errorf("community %q has no relay key", c.ID)
	}
	slot := c.ID + "/" + c.RelayPubkey
	k.mu.Lock()
	key, ok := k.keys[slot]
	k.mu.Unlock()
	if ok {
		return key, nil
	}
	if k.sealer == nil {
		return nil, fmt.Errorf("community %q: no sealer configured to open its relay key", c.ID)
	}
	key, err := k.sealer.Open(ctx, c.ID, c.Ciphertext)
	if err != nil {
		return nil, err
	}
	if key.PublicKey() != c.RelayPubkey {
		return nil, fmt.Errorf("community %q: stored relay key opens to pubkey %s, the row says %s", c.ID, key.PublicKey(), c.RelayPubkey)
	}
	k.mu.Lock()
	if len(k.keys) >= maxCached {
		clear(k.keys)
	}
	k.keys[slot] = key
	k.opens++
	k.mu.Unlock()
	return key, nil
}
