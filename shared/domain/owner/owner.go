// Package owner reads the key a deployment names as its default
// community's first NIP-86 operator (`make deploy OWNER=...`, the migrate
// custom resource's Owner property): an npub (NIP-19) or 64 hex
// characters, answered as lowercase hex. infra/ checks it at synth and
// migrate applies it, through this one rule.
package owner

import (
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
)

// Parse answers s's pubkey in lowercase hex; "" stays "" (no owner).
func Parse(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", nil
	case strings.HasPrefix(strings.ToLower(s), "npub1"):
		prefix, v, err := nip19.Decode(strings.ToLower(s))
		if err != nil || prefix != "npub" {
			return "", fmt.Errorf("owner %q is not a valid npub: %v", s, err)
		}
		pk, _ := v.(string)
		if !eventcheck.LowerHex(pk, 64) {
			return "", fmt.Errorf("owner %q does not decode to a 32-byte public key", s)
		}
		return pk, nil
	}
	if pk := strings.ToLower(s); eventcheck.LowerHex(pk, 64) {
		return pk, nil
	}
	return "", fmt.Errorf("owner %q must be an npub (NIP-19) or 64 hex characters", s)
}
