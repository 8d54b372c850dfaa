package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestNegentropyWithNostrToolsAndNDKSyncLearnsExactlyTheDifference: the
// client side of NIP-77 is a library nobody here wrote
// (nip29clients/negsync.mjs): nostr-tools 2.25.2's nip77 NegentropySync
// (Negentropy over a NegentropyStorageVector) and @nostr-dev-kit/sync
// 1.0.0's NDKSync.sync as an NDK 3.0.3 app reconciles. Neither sync helper
// authenticates by itself: each sends on its library's socket that signed
// in (NIP-42) on the challenge the relay pushes at connect (nostr-tools'
// relay.onauth, NDK's NDKRelayAuthPolicies.signIn), as the relay requires
// for a private group. The member holds another copy of the private
// channel (4 of the relay's events missing, 3 events of its own the relay
// lacks) and learns exactly that difference: need = the relay's 4, have =
// its own 3, and NDKSync fetches the 4. A key outside the group learns
// nothing of it: every id it holds comes back as its own and it needs
// nothing (or a NEG-ERR), so reconciling is no existence oracle.
func TestNegentropyWithNostrToolsAndNDKSyncLearnsExactlyTheDifference(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "NIP-77 client-library tests", map[string]string{
		"@nostr-dev-kit/ndk": "3.0.3", "@nostr-dev-kit/sync": "1.0.0", "nostr-tools": "2.25.2", "ws": "8.18.3",
	})
	r := newRelay(t)
	owner, rl := loggedIn(t, r)
	ch := createChannel(t, rl, owner, "private")
	start := time.Now().Add(-10 * time.Minute)
	var onRelay []nostr.Event
	for i := range 12 {
		ev := signedAt(t, owner, nostr.Timestamp(start.Add(time.Duration(i)*20*time.Second).Unix()), 9, nostr.Tags{{"h", ch}}, "relay copy "+string(rune('a'+i)))
		if err := rl.Publish(ctxT(t), ev); err != nil {
			t.Fatal(err)
		}
		onRelay = append(onRelay, ev)
	}
	// The client's copy: every third of the relay's missing, 3 of its own
	// (signed, never published) the relay lacks.
	var client []nostr.Event
	var wantNeed, wantHave []string
	for i, ev := range onRelay {
		if i%3 == 1 {
			wantNeed = append(wantNeed, ev.ID)
		} else {
			client = append(client, ev)
		}
	}
	for i := range 3 {
		ev := signedAt(t, owner, nostr.Timestamp(start.Add(time.Duration(i)*20*time.Second+10*time.Second).Unix()), 9, nostr.Tags{{"h", ch}}, "other copy "+string(rune('a'+i)))
		client = append(client, ev)
		wantHave = append(wantHave, ev.ID)
	}
	in, _ := json.Marshal(map[string]any{"channel": ch, "member": owner.Secret, "outsider": testkit.NewKey(t).Secret, "client": client})
	path := filepath.Join(t.TempDir(), "negsync.json")
	if err := os.WriteFile(path, in, 0o600); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results map[string]struct {
			Need, Have, Fetched []string
			Err                 string
		} `json:"results"`
	}
	stderr := RunNode(t, node, dir, 3*time.Minute, &got, "negsync.mjs", r.WSURL, path)
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	clientIDs := make([]string, 0, len(client))
	for _, ev := range client {
		clientIDs = append(clientIDs, ev.ID)
	}
	for _, lib := range []string{"nostr-tools", "ndk-sync"} {
		m, ok := got.Results[lib+"/member"]
		switch {
		case !ok:
			t.Errorf("%s member: no result (stderr %s)", lib, stderr)
		case m.Err != "":
			t.Errorf("%s member: %s (stderr %s)", lib, m.Err, stderr)
		case !slices.Equal(sorted(m.Need), sorted(wantNeed)) || !slices.Equal(sorted(m.Have), sorted(wantHave)):
			t.Errorf("%s member learned need %v have %v, want need %v have %v", lib, m.Need, m.Have, wantNeed, wantHave)
		case lib == "ndk-sync" && !slices.Equal(sorted(m.Fetched), sorted(wantNeed)):
			t.Errorf("NDKSync fetched %v, want the relay's %v", m.Fetched, wantNeed)
		}
		o, ok := got.Results[lib+"/outsider"]
		t.Logf("%s: member need %d have %d fetched %d; outsider need %d have %d err %q", lib, len(m.Need), len(m.Have), len(m.Fetched), len(o.Need), len(o.Have), o.Err)
		switch {
		case !ok:
			t.Errorf("%s outsider: no result (stderr %s)", lib, stderr)
		case len(o.Need) != 0 || len(o.Fetched) != 0:
			t.Errorf("%s outsider learned %d of the private group's ids and fetched %d", lib, len(o.Need), len(o.Fetched))
		case o.Err != "" && !strings.Contains(o.Err, "restricted:") && !strings.Contains(o.Err, "auth-required:"):
			t.Errorf("%s outsider: an unprefixed refusal %q", lib, o.Err)
		case o.Err == "" && !slices.Equal(sorted(o.Have), sorted(clientIDs)):
			t.Errorf("%s outsider: %d of its %d ids came back as its own: the relay's side was not empty", lib, len(o.Have), len(clientIDs))
		}
	}
}
