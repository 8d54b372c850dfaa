package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestInvitePublicPagesHoldUnderAThirtyRequestBurst: the pages anyone may
// fetch without a key (the join policy, an invite's landing page for a
// good and for an unknown code, NIP-11 and /info) answer 30 requests at
// once with 200 and one and the same body each, and the landing page of
// an unknown code is the good code's page but for the code: it is no
// oracle for which codes exist.
func TestInvitePublicPagesHoldUnderAThirtyRequestBurst(t *testing.T) {
	c := newInvitesCommunity(t, Options{})
	_, good := c.mint(t, c.adm, `{"max_uses":3}`)
	unknown := strings.Repeat("Z", len(good.Code))
	paths := []string{"/api/join-policy", "/invite/" + good.Code, "/invite/" + unknown, "/", "/info"}
	const burst = 30
	type answer struct {
		status int
		body   []byte
	}
	got := make([][]answer, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		got[i] = make([]answer, burst)
		for j := range burst {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, body := c.h.do(nil, http.MethodGet, p, "", "", nil)
				got[i][j] = answer{st, body}
			}()
		}
	}
	wg.Wait()
	for i, p := range paths {
		for j, a := range got[i] {
			if a.status != http.StatusOK {
				t.Errorf("GET %s, request %d of %d at once: %d %.200s", p, j+1, burst, a.status, a.body)
				continue
			}
			if !bytes.Equal(a.body, got[i][0].body) {
				t.Errorf("GET %s: request %d answered another body than request 1", p, j+1)
			}
		}
	}
	goodPage := strings.ReplaceAll(string(got[1][0].body), good.Code, "CODE")
	unknownPage := strings.ReplaceAll(string(got[2][0].body), unknown, "CODE")
	if goodPage != unknownPage {
		t.Errorf("the landing page of a good code differs from an unknown code's beyond the code:\n%s\n---\n%s", goodPage, unknownPage)
	}
}

// TestMintedInviteAndJoinRequestAreReadByNoOtherPath: the relay-signed
// 28935 an admin's REQ mints (its claim code admits a key) and a 28934
// join request (which carries a claim) are never stored, so no other key
// (a member, a stranger) and not the admin either finds them again by id,
// by kind, by search or by COUNT, over the bridge or a socket; the code
// still admits exactly one key.
func TestMintedInviteAndJoinRequestAreReadByNoOtherPath(t *testing.T) {
	c := newInvitesCommunity(t, Options{})
	member, stranger, joiner := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	_, m := c.mint(t, c.adm, `{"max_uses":3}`)
	if st, _ := claimOn(t, c.h, member, m.Code, ""); st != http.StatusOK {
		t.Fatal("member's claim")
	}

	ra := authedOn(t, c.h, c.adm)
	ra.sendJSON([]any{"REQ", "inv", map[string]any{"kinds": []int{28935}, "limit": 1}})
	_, minted := ra.event()
	if minted.Kind != 28935 || minted.Tags.Find("claim") == nil {
		t.Fatalf("minted: %+v", minted)
	}
	ra.expect("EOSE")
	code := minted.Tags.Find("claim")[1]

	// The joiner's 28934 with that claim admits it.
	rj := authedOn(t, c.h, joiner)
	join := signed(t, joiner, 28934, nostr.Tags{{"claim", code}}, "")
	rj.sendJSON([]any{"EVENT", join})
	if ok := rj.expect("OK"); string(ok[2]) != "true" {
		t.Fatalf("28934: %s", joinRaw(ok))
	}

	filters := map[string]map[string]any{
		"the 28935 by id":   {"ids": []string{minted.ID}},
		"the 28934 by id":   {"ids": []string{join.ID}},
		"kind 28935":        {"kinds": []int{28935}, "limit": 10, "authors": []string{minted.PubKey}},
		"kind 28934":        {"kinds": []int{28934}, "limit": 10},
		"a search for code": {"search": code},
		"the claim tag":     {"kinds": []int{28934, 28935}, "#claim": []string{code}},
	}
	for name, u := range map[string]user{"the admin": c.adm, "a member": member, "a stranger": stranger, "the joiner": joiner} {
		for what, f := range filters {
			var evs []nostr.Event
			st, out := c.h.do(&u, http.MethodPost, "/query", "application/json", "", []byte(mustJSON([]any{f})))
			if st == http.StatusOK {
				if err := json.Unmarshal(out, &evs); err != nil {
					t.Fatalf("%s, %s: %s", name, what, out)
				}
			} else if st >= 500 {
				t.Errorf("%s, %s over /query: %d %s", name, what, st, out)
			}
			if len(evs) != 0 {
				t.Errorf("%s found %s over /query: %d events", name, what, len(evs))
			}
			st, out = c.h.do(&u, http.MethodPost, "/count", "application/json", "", []byte(mustJSON([]any{f})))
			var n struct{ Count int }
			if st == http.StatusOK {
				_ = json.Unmarshal(out, &n)
			} else if st >= 500 {
				t.Errorf("%s, %s over /count: %d %s", name, what, st, out)
			}
			if n.Count != 0 {
				t.Errorf("%s counted %s: %d", name, what, n.Count)
			}
		}
	}
	// Over a socket, as a member (by id and by search; kind 28935 alone
	// would ask for a new invite).
	rm := authedOn(t, c.h, member)
	for what, f := range map[string]map[string]any{"by id": {"ids": []string{minted.ID, join.ID}}, "by search": {"search": code}} {
		rm.sendJSON([]any{"REQ", "s", f})
		parts := rm.read()
		if v := str(t, parts[0]); v == "EVENT" {
			t.Errorf("a member's REQ %s found an invite event: %s", what, joinRaw(parts))
		} else if v == "EOSE" || v == "CLOSED" {
			continue
		}
	}
	// The code minted for the admin was spent by the joiner: a stranger's
	// claim with it admits nobody.
	rs := authedOn(t, c.h, stranger)
	rs.sendJSON([]any{"EVENT", signed(t, stranger, 28934, nostr.Tags{{"claim", code}}, "")})
	if ok := rs.expect("OK"); string(ok[2]) == "true" {
		t.Fatalf("a spent claim admitted a second key: %s", joinRaw(ok))
	}
}
