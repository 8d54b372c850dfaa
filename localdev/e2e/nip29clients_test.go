package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// TestNIP29Clients drives two NIP-29 client libraries nobody here wrote,
// NDK 3.0.3 and welshman 0.8.15 (the library of Flotilla), pinned exactly in
// nip29clients/package-lock.json and installed with `npm ci`, through a
// group client's flows with their own helpers and default ids
// (nip29clients/nip29clients.mjs): create, metadata and each flag for a
// member, a non-member and an outsider, joining with and without an invite
// code, pending requests, roles and 39003, subgroups, kind 11 threads with
// NIP-22 comments read back by their tag filters, supported_kinds, and bad
// input. Without node on PATH it is skipped; BUZZ_REQUIRE_INTEROP=1 makes
// that a failure.
func TestNIP29Clients(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "NIP-29 client tests", map[string]string{
		"@nostr-dev-kit/ndk": "3.0.3", "@welshman/net": "0.8.15", "@welshman/util": "0.8.15",
		"@welshman/signer": "0.8.15", "@welshman/lib": "0.8.15", "nostr-tools": "2.25.2", "ws": "8.18.3",
	})

	r := newRelay(t)
	var got struct {
		Checks []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"checks"`
	}
	stderr := RunNode(t, node, dir, 3*time.Minute, &got, "nip29clients.mjs", r.WSURL, r.HTTPURL)
	if len(got.Checks) < 50 {
		t.Errorf("%d checks ran: the script stopped early (stderr %s)", len(got.Checks), stderr)
	}
	for _, c := range got.Checks {
		if !c.OK {
			t.Errorf("%s: failed (%s)", c.Name, c.Detail)
		}
	}
}

// TestLivenessFrameIsIgnoredByNDKWelshmanAndNostrTools: nostr-tools 2.25.2,
// welshman 0.8.15 and NDK 3.0.3 (nip29clients/liveness.mjs) each sign in
// on the challenge the relay pushes at connect, without speaking first and
// once only, hold a subscription, and idle while the relay sends its
// liveness frame every second (make dev: every 30 s): each library's socket
// gets the frames, and none of them shows anything for them (no NOTICE,
// no second EOSE of the subscription, no new sign-in, no closed socket or
// subscription, no error); a new event then arrives live on each.
func TestLivenessFrameIsIgnoredByNDKWelshmanAndNostrTools(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "liveness test of NDK, welshman and nostr-tools", map[string]string{
		"@nostr-dev-kit/ndk": "3.0.3", "@welshman/net": "0.8.15", "@welshman/signer": "0.8.15", "nostr-tools": "2.25.2", "ws": "8.18.3",
	})
	r := StartTest(t, Options{LivenessPeriod: time.Second})
	var got struct {
		Libs map[string]struct {
			Liveness int      `json:"liveness"`
			EOSEs    int      `json:"eoses"`
			SignIns  int      `json:"signIns"`
			Events   []string `json:"events"`
		} `json:"libs"`
		Effects []string `json:"effects"`
	}
	stderr := RunNode(t, node, dir, 2*time.Minute, &got, "liveness.mjs", r.WSURL, "4000")
	for _, e := range got.Effects {
		t.Errorf("visible effect: %s", e)
	}
	for _, name := range []string{"nostr-tools", "welshman", "ndk"} {
		l, ok := got.Libs[name]
		switch {
		case !ok:
			t.Errorf("%s: no result (stderr %s)", name, stderr)
		case l.Liveness < 2:
			t.Errorf("%s: %d liveness frames while idle, want at least 2", name, l.Liveness)
		case l.SignIns != 1 || l.EOSEs != 1 || len(l.Events) != 1:
			t.Errorf("%s: %d sign-ins, %d EOSEs, events %v; want 1, 1 and the live one", name, l.SignIns, l.EOSEs, l.Events)
		}
	}
}

// TestNDKSignInThenREQAnswered20Of20: NDK 3.0.3 connecting with
// NDKRelayAuthPolicies.signIn and sending a REQ at once
// (nip29clients/ndkauth.mjs), as an app opening a session does, gets its
// REQ answered on each of 20 fresh sockets: the REQ that races the
// sign-in to the pushed challenge is never left without an answer.
func TestNDKSignInThenREQAnswered20Of20(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "NDK sign-in then REQ test", map[string]string{
		"@nostr-dev-kit/ndk": "3.0.3", "nostr-tools": "2.25.2", "ws": "8.18.3",
	})
	r := StartTest(t, Options{})
	var got struct {
		Runs     int               `json:"runs"`
		Answered int               `json:"answered"`
		MS       []int             `json:"ms"`
		Failures []json.RawMessage `json:"failures"`
	}
	RunNode(t, node, dir, 5*time.Minute, &got, "ndkauth.mjs", r.WSURL, "20")
	t.Logf("ms to the answer, each run: %v", got.MS)
	if got.Runs != 20 || got.Answered != 20 {
		for _, f := range got.Failures {
			t.Logf("unanswered run: %s", f)
		}
		t.Fatalf("NDK signIn then REQ: %d of %d answered, want 20 of 20", got.Answered, got.Runs)
	}
}
