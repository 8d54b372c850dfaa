package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestInteropNostrTools runs nostr-tools 2.25.2 (with ws, on Node) against
// the relay: a publish refused with auth-required:, NIP-42 AUTH, publish,
// REQ with the stored event then EOSE, a live event, and POST /query with
// nostr-tools' own NIP-98 token. It installs the pinned packages with
// `npm ci` when they are missing. Without node on PATH it is skipped
// (BUZZ_REQUIRE_INTEROP=1 makes that a failure).
func TestInteropNostrTools(t *testing.T) {
	node, dir := NodePackages(t, "interop", "nostr-tools interop test", map[string]string{"nostr-tools": "2.25.2", "ws": "8.18.3"})

	r := newRelay(t)
	var got struct {
		Pubkey           string   `json:"pubkey"`
		BeforeAuth       string   `json:"beforeAuth"`
		StoredID         string   `json:"storedId"`
		LiveID           string   `json:"liveId"`
		StoredBeforeEose []string `json:"storedBeforeEose"`
		QueryStatus      int      `json:"queryStatus"`
		QueryIDs         []string `json:"queryIds"`
	}
	RunNode(t, node, dir, 60*time.Second, &got, "interop.mjs", r.WSURL, r.HTTPURL)
	if !strings.HasPrefix(got.BeforeAuth, "auth-required:") {
		t.Errorf("publish before AUTH: %q, want auth-required:", got.BeforeAuth)
	}
	if !slices.Equal(got.StoredBeforeEose, []string{got.StoredID}) {
		t.Errorf("stored events before EOSE %v, want [%s]", got.StoredBeforeEose, got.StoredID)
	}
	if got.QueryStatus != 200 || !slices.Contains(got.QueryIDs, got.StoredID) || !slices.Contains(got.QueryIDs, got.LiveID) {
		t.Errorf("/query with nostr-tools NIP-98: status %d ids %v, want both %s and %s", got.QueryStatus, got.QueryIDs, got.StoredID, got.LiveID)
	}
}
