package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Flotilla's steps (issue 56) driven by nip29clients/flotilla.mjs with the
// welshman 0.8.15 packages Flotilla runs on, pinned in
// nip29clients/package-lock.json: Join Space (NIP-43), uploads to the
// space's own Blossom server, push found on the space, a zap goal in a
// room beside Buzz's unban, and every kind Flotilla publishes in a space.

// flotillaPins are the packages flotilla.mjs imports.
var flotillaPins = map[string]string{
	"@nostr-dev-kit/ndk": "3.0.3", "@welshman/net": "0.8.15", "@welshman/util": "0.8.15",
	"@welshman/signer": "0.8.15", "@welshman/lib": "0.8.15", "nostr-tools": "2.25.2", "ws": "8.18.3",
}

// flotillaChecks is a mode's list of named checks.
type flotillaChecks struct {
	Checks []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"checks"`
	Crash string `json:"crash"`
}

func (c flotillaChecks) report(t *testing.T, atLeast int, stderr string) {
	t.Helper()
	if c.Crash != "" || len(c.Checks) < atLeast {
		t.Errorf("%d checks ran, want %d: %s (stderr %s)", len(c.Checks), atLeast, c.Crash, stderr)
	}
	for _, k := range c.Checks {
		if !k.OK {
			t.Errorf("%s: failed (%s)", k.Name, k.Detail)
		}
	}
}

// flotillaJoin is the join mode's answer: Flotilla's error ("" none) and
// the relay's OK.
type flotillaJoin struct {
	Error  string `json:"error"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Crash  string `json:"crash"`
}

// TestFlotillaJoinSpaceWithWelshman: Flotilla's Join Space
// (attemptRelayAccess: sign in, a 28934 with an empty claim) to a
// community that does not enforce membership gets OK true and Flotilla
// sees no error; nothing changes (no member row, no 8000 or 13534), also
// for 30 keys at once. Once the community enforces membership (NIP-11
// lists 43) the same request gets `restricted: … invite code …`, which
// Flotilla shows as "join request rejected" and asks for an invite; a
// member's own is OK true `duplicate:`; a banned key's is refused.
func TestFlotillaJoinSpaceWithWelshman(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "Flotilla join test", flotillaPins)
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	id := r.App.Config.DefaultCommunity
	owner := testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, id, owner.Pub); err != nil {
		t.Fatal(err)
	}
	bo := newBridge(t, r, owner)
	relayState := func() int {
		return bo.count(map[string]any{"kinds": []int{8000, 8001, 13534}})
	}
	before := relayState()

	newcomer := testkit.NewKey(t)
	var j flotillaJoin
	RunNode(t, node, dir, time.Minute, &j, "flotilla.mjs", "join", r.WSURL, newcomer.Secret)
	if j.Crash != "" || !j.OK || j.Error != "" {
		t.Fatalf("Join Space of an open community: %+v", j)
	}
	if role, err := r.App.Store.RelayMembersGetRole(ctx, id, newcomer.Pub); err != nil || role != "" {
		t.Errorf("the claimless join recorded role %q (%v)", role, err)
	}

	// 30 keys join at once over the bridge: all accepted, nothing changes.
	var wg sync.WaitGroup
	answers := make([]eventsAnswer, 30)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := testkit.NewKey(t)
			answers[i] = newBridge(t, r, k).submit(signed(t, k, 28934, nostr.Tags{{"claim", ""}}, ""))
		}()
	}
	wg.Wait()
	for i, a := range answers {
		if !a.Accepted {
			t.Errorf("join %d of 30 at once: %s", i, a.Message)
		}
	}
	if after := relayState(); after != before {
		t.Errorf("claimless joins changed the membership events: %d, then %d", before, after)
	}
	// A request outside nip43's freshness window is still refused.
	stale := testkit.NewKey(t)
	if a := newBridge(t, r, stale).submit(signedAt(t, stale, nostr.Timestamp(time.Now().Unix()-600), 28934, nostr.Tags{{"claim", ""}}, "")); a.Accepted {
		t.Error("a 28934 ten minutes old was accepted")
	}
	// A banned key's join is refused, whatever the community.
	banned := testkit.NewKey(t)
	if st, m := bo.rpc("banpubkey", banned.Pub, "spam"); st != http.StatusOK {
		t.Fatalf("banpubkey: %d %v", st, m)
	}
	if a := newBridge(t, r, banned).submit(signed(t, banned, 28934, nostr.Tags{{"claim", ""}}, "")); a.Accepted || !strings.HasPrefix(a.Message, "blocked:") {
		t.Errorf("a banned key's join: %+v", a)
	}

	// The community enforces membership: NIP-11 lists 43, and Flotilla's
	// join without a claim is refused as NIP-43 and Flotilla expect.
	if st, m := bo.rpc("setrelaymembership", true); st != http.StatusOK {
		t.Fatalf("setrelaymembership: %d %v", st, m)
	}
	r.ForgetCommunities()
	if nips := nip11NIPsRaw(t, r); !strings.Contains(nips, "43") {
		t.Errorf("an enforcing community's supported_nips %s lack 43", nips)
	}
	late := testkit.NewKey(t)
	j = flotillaJoin{}
	RunNode(t, node, dir, time.Minute, &j, "flotilla.mjs", "join", r.WSURL, late.Secret)
	if j.OK || j.Error != "join request rejected" || !strings.HasPrefix(j.Detail, "restricted:") || !strings.Contains(j.Detail, "invite code") {
		t.Errorf("Join Space of an enforcing community: %+v", j)
	}
	if role, _ := r.App.Store.RelayMembersGetRole(ctx, id, late.Pub); role != "" {
		t.Errorf("a refused join left role %q", role)
	}
	// The owner's own join: OK true, duplicate:, no error in Flotilla.
	j = flotillaJoin{}
	RunNode(t, node, dir, time.Minute, &j, "flotilla.mjs", "join", r.WSURL, owner.Secret)
	if !j.OK || j.Error != "" || !strings.HasPrefix(j.Detail, "duplicate:") {
		t.Errorf("a member's Join Space: %+v", j)
	}
}

// nip11NIPsRaw is supported_nips of the relay's NIP-11 document, as JSON.
func nip11NIPsRaw(t *testing.T, r *Relay) string {
	t.Helper()
	var doc struct {
		NIPs json.RawMessage `json:"supported_nips"`
	}
	nip11(t, r, &doc)
	return string(doc.NIPs)
}

// TestFlotillaUploadsToTheSpaceWithWelshman: Flotilla's probe
// (fetchHasBlossomSupport: HEAD /upload with makeBlossomAuthEvent's upload
// authorization, no x tag, the hash in X-SHA-256) answers 200, so Flotilla
// uploads to the space; its uploadFile (PUT /upload, the hash bound) is
// stored and served. The probe's authorization cannot PUT, an
// authorization bound to another hash neither, and HEAD still refuses a
// missing, expired, delete or other-hash authorization.
func TestFlotillaUploadsToTheSpaceWithWelshman(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "Flotilla upload test", flotillaPins)
	r := StartTest(t, Options{Media: true})
	owner := testkit.NewKey(t)
	newChannel(t, newBridge(t, r, owner), "open") // a channel member may upload
	var got flotillaChecks
	stderr := RunNode(t, node, dir, 2*time.Minute, &got, "flotilla.mjs", "blossom", r.WSURL, owner.Secret)
	got.report(t, 10, stderr)
}

// TestFlotillaFindsPushOnTheSpace: where push is served, Flotilla's
// getPushStuff reads NIP-11 (self, "9a" among supported_nips) and finds
// the space's own push, older Flotilla's strict includes("9a") too;
// nostr-tools and NDK still read the document and its integers; the 30390
// Flotilla then signs, encrypted to self, is accepted. Without push,
// NIP-11 lists no "9a", so Flotilla registers elsewhere as before.
func TestFlotillaFindsPushOnTheSpace(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "Flotilla push detection test", flotillaPins)
	r := StartTest(t, Options{Push: true})
	k := testkit.NewKey(t)
	var got flotillaChecks
	stderr := RunNode(t, node, dir, 2*time.Minute, &got, "flotilla.mjs", "push", r.WSURL, k.Secret)
	got.report(t, 12, stderr)

	// Push off: no push sender configured (with BUZZ_LAMBDA=processes the
	// stack's functions get one unless the environment says none).
	off := StartTest(t, Options{Env: map[string]string{"PUSH_SENDER_FUNCTION": ""}})
	if nips := nip11NIPsRaw(t, off); strings.Contains(nips, `"9a"`) {
		t.Errorf("without push, supported_nips %s list 9a", nips)
	}
}

// TestFlotillaZapGoalBesideBuzzUnban: kind 9041 is two things. Flotilla's
// zap goal (NIP-75: amount, relays, summary, h) from a room's member is
// stored in the room and read back by Flotilla's room filter; one with
// amount 0 is refused invalid:. Buzz's unban (a p tag, no amount) from a
// non-operator is still refused, and from an operator still lifts the
// ban, stored nowhere; a goal from a non-member of a private room is
// refused as any message there.
func TestFlotillaZapGoalBesideBuzzUnban(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "Flotilla zap goal test", flotillaPins)
	r := StartTest(t, Options{})
	ctx := ctxT(t)
	op, member, outsider, target := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, r.App.Config.DefaultCommunity, op.Pub); err != nil {
		t.Fatal(err)
	}
	bm, bop, bout := newBridge(t, r, member), newBridge(t, r, op), newBridge(t, r, outsider)
	room := newChannel(t, bm, "private")

	var got flotillaChecks
	stderr := RunNode(t, node, dir, time.Minute, &got, "flotilla.mjs", "goal", r.WSURL, member.Secret, room)
	got.report(t, 4, stderr)

	// Buzz's moderation beside it.
	bop.accept(signed(t, op, 9040, nostr.Tags{{"p", target.Pub}, {"reason", "spam"}}, ""))
	if a := newBridge(t, r, target).submit(signed(t, target, 1, nil, "banned?")); a.Accepted {
		t.Fatal("the banned key still writes")
	}
	if a := bout.submit(signed(t, outsider, 9041, nostr.Tags{{"p", target.Pub}}, "")); a.Accepted || !strings.HasPrefix(a.Message, "restricted:") {
		t.Errorf("a non-operator's unban: %+v", a)
	}
	unban := signed(t, op, 9041, nostr.Tags{{"p", target.Pub}}, "")
	bop.accept(unban)
	if a := newBridge(t, r, target).submit(signed(t, target, 1, nil, "back")); !a.Accepted {
		t.Errorf("the operator's unban did not lift the ban: %s", a.Message)
	}
	if evs := bop.query(map[string]any{"ids": []string{unban.ID}}); len(evs) != 0 {
		t.Errorf("the unban was stored: %v", evs)
	}
	goals := bm.query(map[string]any{"kinds": []int{9041}, "#h": []string{room}})
	if len(goals) != 1 || goals[0].Tags.Find("amount") == nil {
		t.Errorf("the room's 9041s: %v", goals)
	}
	// A goal from a key outside the private room is refused, and the
	// outsider reads none there.
	g := signed(t, outsider, 9041, nostr.Tags{{"amount", "1000"}, {"relays", r.WSURL}, {"h", room}}, "not mine")
	if a := bout.submit(g); a.Accepted {
		t.Error("a non-member's goal in a private room was accepted")
	}
	if evs := bout.query(map[string]any{"kinds": []int{9041}, "#h": []string{room}}); len(evs) != 0 {
		t.Errorf("an outsider reads the private room's goals: %v", evs)
	}
	// A 9041 with an amount tag is never an unban: an operator's goal
	// naming the banned key lifts nothing.
	bop.accept(signed(t, op, 9040, nostr.Tags{{"p", target.Pub}}, ""))
	bop.accept(signed(t, op, 9041, nostr.Tags{{"p", target.Pub}, {"amount", "1000"}, {"relays", r.WSURL}}, "a goal, not an unban"))
	if a := newBridge(t, r, target).submit(signed(t, target, 1, nil, "still banned?")); a.Accepted {
		t.Error("a zap goal naming a banned key lifted the ban")
	}
}

// flotillaKinds is what each kind Flotilla publishes in a space gets, as
// docs/compatibility.md's Flotilla section lists it: "ok" accepted, else
// the refusal's prefix.
var flotillaKinds = map[string]string{
	"9 message":                              "ok",
	"11 thread":                              "ok",
	"1111 comment":                           "ok",
	"7 reaction":                             "ok",
	"9041 zap goal":                          "ok",
	"31923 calendar event":                   "ok",
	"30402 classified":                       "ok",
	"1068 poll":                              "ok",
	"1018 poll response":                     "ok",
	"1984 report":                            "ok",
	"9021 room join":                         "ok",
	"9002 room edit meta":                    "ok",
	"9007 room create":                       "ok",
	"9005 room delete event":                 "ok",
	"5 deletion":                             "ok",
	"9022 room leave":                        "ok",
	"10009 group list":                       "ok",
	"0 profile":                              "ok",
	"3 follows":                              "ok",
	"10002 relays":                           "ok",
	"10050 messaging relays":                 "ok",
	"10063 blossom servers":                  "restricted:",
	"30078 settings":                         "ok",
	"1059 gift wrap":                         "ok",
	"9735 zap receipt (unsigned-in service)": "auth-required:",
	"28936 relay leave":                      "invalid:",
}

// TestFlotillaKindsInASpace: every kind Flotilla publishes in a space,
// built as Flotilla builds it and sent by welshman from the room's
// creator, gets the answer docs/compatibility.md lists for it.
func TestFlotillaKindsInASpace(t *testing.T) {
	node, dir := NodePackages(t, "nip29clients", "Flotilla kinds test", flotillaPins)
	r := StartTest(t, Options{})
	owner := testkit.NewKey(t)
	room := newChannel(t, newBridge(t, r, owner), "open")
	var got struct {
		Answers map[string]struct {
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"answers"`
		Crash string `json:"crash"`
	}
	stderr := RunNode(t, node, dir, 2*time.Minute, &got, "flotilla.mjs", "kinds", r.WSURL, owner.Secret, room, testkit.NewKey(t).Secret)
	if got.Crash != "" {
		t.Fatalf("kinds: %s (stderr %s)", got.Crash, stderr)
	}
	for name, want := range flotillaKinds {
		a, ok := got.Answers[name]
		switch {
		case !ok:
			t.Errorf("%s: not sent", name)
		case want == "ok" && !a.OK:
			t.Errorf("%s: refused %q, want accepted", name, a.Detail)
		case want != "ok" && (a.OK || !strings.HasPrefix(a.Detail, want)):
			t.Errorf("%s: %v %q, want refused %s", name, a.OK, a.Detail, want)
		}
	}
	for name := range got.Answers {
		if _, ok := flotillaKinds[name]; !ok {
			t.Errorf("%s: sent but not in the table", name)
		}
	}
}
