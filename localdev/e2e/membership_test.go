package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// nip11 decodes the relay's NIP-11 document into out.
func nip11(t *testing.T, r *Relay, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.HTTPURL, nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("NIP-11: %v", err)
	}
}

// nip11NIPs is the NIP-11 document's supported_nips.
func nip11NIPs(t *testing.T, r *Relay) []int {
	t.Helper()
	var doc struct {
		NIPs []any `json:"supported_nips"` // integers, then "9a" where push is served
	}
	nip11(t, r, &doc)
	var out []int
	for _, n := range doc.NIPs {
		if f, ok := n.(float64); ok {
			out = append(out, int(f))
		}
	}
	return out
}

// upload PUTs body to /upload as u with a BUD-01 24242 authorization;
// the status and X-Reason.
func upload(t *testing.T, r *Relay, u user, body []byte) (int, string) {
	t.Helper()
	hash := media.Hash(body)
	auth := signed(t, u, 24242, nostr.Tags{{"t", "upload"}, {"x", hash},
		{"expiration", strconv.FormatInt(time.Now().Unix()+600, 10)}}, "upload")
	raw, _ := json.Marshal(auth)
	req, _ := http.NewRequest(http.MethodPut, r.HTTPURL+"/upload", bytes.NewReader(body))
	req.Header.Set("X-SHA-256", hash)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Authorization", "Nostr "+base64.StdEncoding.EncodeToString(raw))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Reason")
}

// download GETs url (a blob) as u with a BUD-01 24242 get authorization
// (nil: without one), not following a redirect; the status and X-Reason.
func download(t *testing.T, url string, u *user) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if u != nil {
		auth := signed(t, *u, 24242, nostr.Tags{{"t", "get"}, {"x", url[strings.LastIndex(url, "/")+1:]},
			{"expiration", strconv.FormatInt(time.Now().Unix()+600, 10)}}, "get")
		raw, _ := json.Marshal(auth)
		req.Header.Set("Authorization", "Nostr "+base64.StdEncoding.EncodeToString(raw))
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Reason")
}

// membershipList is the stored 13534's member tags as key:role.
func membershipList(t *testing.T, b *bridge) []string {
	t.Helper()
	evs := b.query(map[string]any{"kinds": []int{13534}})
	if len(evs) != 1 {
		t.Fatalf("%d 13534 lists, want exactly one", len(evs))
	}
	if evs[0].PubKey != b.r.App.Signer.PublicKey() || evs[0].Tags[0][0] != "-" {
		t.Fatalf("13534 not relay-signed or not NIP-70 protected: %v", evs[0])
	}
	var out []string
	for _, tg := range evs[0].Tags[1:] {
		out = append(out, tg[1]+":"+tg[2])
	}
	return out
}

// delta is the relay-signed 8000 or 8001 naming key, if b reads one.
func delta(t *testing.T, b *bridge, kind int, key string) bool {
	t.Helper()
	for _, ev := range b.query(map[string]any{"kinds": []int{kind}, "#p": []string{key}}) {
		if ev.PubKey == b.r.App.Signer.PublicKey() && ev.Tags[0][0] == "-" {
			return true
		}
	}
	return false
}

// TestBuzzRelayMembership plays NIP-43 as Buzz's clients and relay run it
// (buzz-test-client's relay membership scenarios): the operator turns
// enforcement on over NIP-86; a non-member is refused restricted: on
// every path, with the same words whatever it asks; 9030 admits a member
// (8000 and 13534, live too), who then posts and reads; 9032 is the
// owner's; 9031 removes (8001); 28936 leaves (8001); enforcement off lets
// everyone back.
func TestBuzzRelayMembership(t *testing.T) {
	r := StartTest(t, Options{Media: true})
	ctx := ctxT(t)
	op := testkit.NewKey(t)
	if err := community.AddOperator(ctx, r.App.Store, "default", op.Pub); err != nil {
		t.Fatal(err)
	}
	alice, bob, mallory := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	bo, ba, bb, bm := newBridge(t, r, op), newBridge(t, r, alice), newBridge(t, r, bob), newBridge(t, r, mallory)

	// Before: an open community. Alice makes a channel and posts.
	ch := newChannel(t, ba, "open")
	hello := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "before enforcement")
	ba.accept(hello)
	if slices.Contains(nip11NIPs(t, r), 43) {
		t.Fatal("NIP-11 lists 43 before enforcement")
	}
	if st, _ := bm.rpc("setrelaymembership", true); st != http.StatusForbidden {
		t.Fatalf("a stranger turns enforcement on: %d", st)
	}
	if st, m := bo.rpc("setrelaymembership", "yes"); st != http.StatusBadRequest {
		t.Fatalf("a non-boolean: %d %v", st, m)
	}
	if st, m := bo.rpc("setrelaymembership", true); st != http.StatusOK || m["result"] != true {
		t.Fatalf("the operator turns enforcement on: %d %v", st, m)
	}
	// Other instances (BUZZ_LAMBDA=processes: the ingest and ws-message
	// processes) see the switch within the community cache's lifetime.
	r.ForgetCommunities()
	if !slices.Contains(nip11NIPs(t, r), 43) {
		t.Fatal("NIP-11 does not list 43 while enforced")
	}

	// The operator (an owner) watches the membership kinds live.
	ro := dial(t, r)
	login(t, ro, op)
	live, err := ro.Subscribe(ctx, nostr.Filters{{Kinds: []int{8000, 8001, 13534}, Since: ptr(nostr.Now())}})
	if err != nil {
		t.Fatal(err)
	}
	eose(t, live)

	// Mallory, no member: restricted: on every path, the same words for a
	// channel that exists and one that does not, so nothing is learnt.
	const notMember = "restricted: not a relay member"
	refusedAll := func(b *bridge, u user) {
		t.Helper()
		if a := b.submit(signed(t, u, 9, nostr.Tags{{"h", ch}}, "let me in")); a.Accepted || a.Message != notMember {
			t.Fatalf("/events: %+v", a)
		}
		for _, path := range []string{"/query", "/count"} {
			var answers []string
			for _, h := range []string{ch, createChannelID()} {
				body, _ := json.Marshal([]map[string]any{{"kinds": []int{9}, "#h": []string{h}}})
				st, out := b.post(path, body)
				if st != http.StatusForbidden {
					t.Fatalf("%s: %d %s", path, st, out)
				}
				answers = append(answers, string(out))
			}
			if answers[0] != answers[1] || !strings.Contains(answers[0], notMember) {
				t.Fatalf("%s answers %q", path, answers)
			}
		}
		rc := authedRaw(t, r, u)
		rc.sendJSON([]any{"EVENT", signed(t, u, 9, nostr.Tags{{"h", ch}}, "over the socket")})
		if ok := rc.expect("OK"); string(ok[2]) != "false" || str(t, ok[3]) != notMember {
			t.Fatalf("EVENT: %s", joinRaw(ok))
		}
		for _, verb := range []string{"REQ", "COUNT"} {
			for _, h := range []string{ch, createChannelID()} {
				rc.sendJSON([]any{verb, "s", map[string]any{"kinds": []int{9}, "#h": []string{h}}})
				if c := rc.expect("CLOSED"); str(t, c[2]) != notMember {
					t.Fatalf("%s: %s", verb, joinRaw(c))
				}
			}
		}
		if st, reason := upload(t, r, u, []byte("mallory's bytes "+u.Pub)); st != http.StatusForbidden || reason != notMember {
			t.Fatalf("upload: %d %q", st, reason)
		}
	}
	refusedAll(bm, mallory)
	refusedAll(ba, alice) // the channel's own creator is no relay member yet

	// 9030: the owner admits alice; the 8000 and the 13534 are relay-signed,
	// delivered live and readable by members.
	bo.accept(signed(t, op, 9030, nostr.Tags{{"p", alice.Pub}}, ""))
	got := map[int]bool{}
	for len(got) < 2 {
		ev := next(t, live)
		if ev.PubKey != r.App.Signer.PublicKey() {
			t.Fatalf("live kind %d not relay-signed", ev.Kind)
		}
		got[ev.Kind] = true
	}
	if !got[8000] || !got[13534] {
		t.Fatalf("live after 9030: %v", got)
	}
	if !delta(t, ba, 8000, alice.Pub) {
		t.Fatal("alice reads no 8000 for herself")
	}
	if l := membershipList(t, ba); !slices.Equal(l, []string{op.Pub + ":owner", alice.Pub + ":member"}) {
		t.Fatalf("13534: %v", l)
	}
	// Alice posts and reads, over both doors; uploads.
	msg := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "a member again")
	ba.accept(msg)
	if evs := ba.query(map[string]any{"kinds": []int{9}, "#h": []string{ch}}); !hasID(evs, msg.ID) || !hasID(evs, hello.ID) {
		t.Fatalf("alice reads %v", idsOf(evs))
	}
	if n := ba.count(map[string]any{"kinds": []int{9}, "#h": []string{ch}}); n != 2 {
		t.Fatalf("alice counts %d", n)
	}
	ra := dial(t, r)
	login(t, ra, alice)
	publish(t, ra, alice, 9, nostr.Tags{{"h", ch}}, "over the socket")
	if st, reason := upload(t, r, alice, []byte("alice's bytes")); st != http.StatusCreated {
		t.Fatalf("alice's upload: %d %q", st, reason)
	}
	// A blob's download passes the same door: the member reads it, a
	// non-member (with a key or without) is refused as at every other door.
	blobURL := r.HTTPURL + "/" + media.Hash([]byte("alice's bytes"))
	if st, reason := download(t, blobURL, &alice); st != http.StatusFound && st != http.StatusOK {
		t.Fatalf("alice's download: %d %q", st, reason)
	}
	for _, who := range []*user{&mallory, nil} {
		if st, reason := download(t, blobURL, who); st != http.StatusForbidden || reason != notMember {
			t.Fatalf("a non-member's download: %d %q", st, reason)
		}
	}
	refusedAll(bm, mallory)

	// 9032 is the owner's: alice cannot promote herself or anyone; the
	// owner makes her admin. An admin adds members, not admins.
	wantPrefix(t, ba.submit(signed(t, alice, 9032, nostr.Tags{{"p", alice.Pub}, {"role", "admin"}}, "")).Message, "restricted:")
	bo.accept(signed(t, op, 9032, nostr.Tags{{"p", alice.Pub}, {"role", "admin"}}, ""))
	if l := membershipList(t, ba); !slices.Contains(l, alice.Pub+":admin") {
		t.Fatalf("13534 after 9032: %v", l)
	}
	wantPrefix(t, ba.submit(signed(t, alice, 9030, nostr.Tags{{"p", bob.Pub}, {"role", "admin"}}, "")).Message, "restricted:")
	ba.accept(signed(t, alice, 9030, nostr.Tags{{"p", bob.Pub}}, ""))
	bb.accept(signed(t, bob, 9, nostr.Tags{{"h", ch}}, "bob joins in"))
	wantPrefix(t, bb.submit(signed(t, bob, 9032, nostr.Tags{{"p", alice.Pub}, {"role", "member"}}, "")).Message, "restricted:")

	// 9031: the admin removes bob; the 8001 is there; bob is out.
	ba.accept(signed(t, alice, 9031, nostr.Tags{{"p", bob.Pub}}, ""))
	if !delta(t, bo, 8001, bob.Pub) {
		t.Fatal("no 8001 for bob")
	}
	refusedAll(bb, bob)

	// 28936: alice leaves (NIP-70 protected); her 8001; she is out.
	wantPrefix(t, ba.submit(signed(t, alice, 28936, nil, "")).Message, "invalid:")
	ba.accept(signed(t, alice, 28936, nostr.Tags{{"-"}}, ""))
	if !delta(t, bo, 8001, alice.Pub) {
		t.Fatal("no 8001 for alice")
	}
	if l := membershipList(t, bo); !slices.Equal(l, []string{op.Pub + ":owner"}) {
		t.Fatalf("13534 after leaving: %v", l)
	}
	refusedAll(ba, alice)

	// Enforcement off: everyone is back as before, NIP-11 without 43.
	if st, m := bo.rpc("setrelaymembership", false); st != http.StatusOK || m["result"] != true {
		t.Fatalf("the operator turns enforcement off: %d %v", st, m)
	}
	r.ForgetCommunities()
	if slices.Contains(nip11NIPs(t, r), 43) {
		t.Fatal("NIP-11 lists 43 after enforcement is off")
	}
	if evs := bm.query(map[string]any{"kinds": []int{9}, "#h": []string{ch}}); !hasID(evs, hello.ID) {
		t.Fatal("mallory cannot read the open channel once enforcement is off")
	}
	bm.accept(signed(t, mallory, 9021, nostr.Tags{{"h", ch}}, ""))
	bm.accept(signed(t, mallory, 9, nostr.Tags{{"h", ch}}, "hello all"))
	if st, reason := upload(t, r, mallory, []byte("mallory's bytes")); st != http.StatusCreated {
		t.Fatalf("mallory's upload once enforcement is off: %d %q", st, reason)
	}
	wantPrefix(t, ba.submit(signed(t, alice, 28936, nostr.Tags{{"-"}}, "")).Message, "invalid:")
}
