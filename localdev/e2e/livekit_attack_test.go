package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestLiveKitRoomHoldsThirtyAtOnceAndHidesAPrivateRoom: a private group
// with a LiveKit room and 30 members. The 30 ask for a token at once and
// each gets one naming itself and the room; LiveKit's 30 joins arrive at
// once and each is answered 204 (never a 5xx), leaving one relay-signed
// 39004 that lists the 30 once each; the 30 leaves at once leave it
// empty. A key outside the group reads no 39004 of the room on REQ,
// COUNT or POST /query, by its group or by its id, the same as for a
// group that does not exist, nor live as the room changes, while a
// member reads it and gets each change live.
func TestLiveKitRoomHoldsThirtyAtOnceAndHidesAPrivateRoom(t *testing.T) {
	lkc := lk.Config{URL: "wss://livekit.example", APIKey: "APIe2e", APISecret: "an-e2e-secret-of-thirty-two-chars!"}
	r := StartTest(t, Options{Env: map[string]string{"LIVEKIT_URL": lkc.URL, "LIVEKIT_API_KEY": lkc.APIKey, "LIVEKIT_API_SECRET": lkc.APISecret}})
	owner := testkit.NewKey(t)
	if err := community.AddOperator(ctxT(t), r.App.Store, "default", owner.Pub); err != nil {
		t.Fatal(err)
	}
	group := testkit.ChannelID()
	bo := newBridge(t, r, owner)
	bo.accept(signed(t, owner, 9007, nostr.Tags{{"h", group}, {"name", "private av"}, {"visibility", "private"}}, ""))
	const n = 30
	members := make([]user, n)
	for i := range members {
		members[i] = testkit.NewKey(t)
		bo.accept(signed(t, owner, 9000, nostr.Tags{{"h", group}, {"p", members[i].Pub}}, ""))
	}

	path := lk.TokenPathPrefix + group
	identities := make([]string, n)
	var wg sync.WaitGroup
	for i := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body := lkDo(t, r, &members[i], http.MethodGet, path, "", nil)
			var got struct {
				Token string `json:"participant_token"`
			}
			if st != http.StatusOK || json.Unmarshal(body, &got) != nil {
				t.Errorf("member %d of %d at once: %d %.200s", i+1, n, st, body)
				return
			}
			c, err := lk.Verify(got.Token, lkc.APIKey, lkc.APISecret, time.Now())
			if err != nil || lk.PubkeyOf(c.Subject) != members[i].Pub || c.Video == nil || c.Video.Room != lk.RoomName("default", group) {
				t.Errorf("member %d's token: %+v %v", i+1, c, err)
				return
			}
			identities[i] = c.Subject
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	hooks := func(event string) {
		t.Helper()
		statuses := make([]int, n)
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		for i := range identities {
			body, _ := json.Marshal(map[string]any{"event": event, "room": map[string]string{"name": lk.RoomName("default", group)},
				"participant": map[string]string{"identity": identities[i]}})
			tok, err := lk.Sign(lk.Claims{Issuer: lkc.APIKey, NotBefore: time.Now().Unix(), Expires: time.Now().Add(time.Minute).Unix(), Sha256: lk.BodyHash(body)}, lkc.APISecret)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i], bodies[i] = r.callWith(t, r.HTTPURL+lk.WebhookPath, tok, body)
			}()
		}
		wg.Wait()
		for i, st := range statuses {
			if st != http.StatusNoContent {
				t.Errorf("%s %d of %d at once: %d %.200s", event, i+1, n, st, bodies[i])
			}
		}
	}
	participants := func(b *bridge) []string {
		t.Helper()
		lists := ofKind(b.query(map[string]any{"kinds": []int{39004}, "#d": []string{group}}), 39004)
		if len(lists) != 1 {
			t.Fatalf("39004s of the room: %d", len(lists))
		}
		var pks []string
		for _, tag := range lists[0].Tags {
			if len(tag) > 1 && tag[0] == "participant" {
				pks = append(pks, tag[1])
			}
		}
		slices.Sort(pks)
		return pks
	}
	want := make([]string, n)
	for i, m := range members {
		want[i] = m.Pub
	}
	slices.Sort(want)

	hooks(lk.ParticipantJoined)
	member := newBridge(t, r, members[0])
	if got := participants(member); !slices.Equal(got, want) {
		t.Errorf("participants after 30 joins at once: %d, want the 30 once each", len(got))
	}

	stranger, srl := loggedIn(t, r)
	sb := newBridge(t, r, stranger)
	for _, g := range []string{group, testkit.ChannelID()} {
		f := map[string]any{"kinds": []int{39004}, "#d": []string{g}}
		if evs := sb.query(f); len(evs) != 0 {
			t.Errorf("a stranger's POST /query of the room's 39004 (%s): %d events", g, len(evs))
		}
		if c := sb.count(f); c != 0 {
			t.Errorf("a stranger's POST /count of the room's 39004 (%s): %d", g, c)
		}
		evs, err := srl.QuerySync(ctxT(t), nostr.Filter{Kinds: []int{39004}, Tags: nostr.TagMap{"d": {g}}})
		if err != nil || len(evs) != 0 {
			t.Errorf("a stranger's REQ of the room's 39004 (%s): %d events (%v)", g, len(evs), err)
		}
	}

	// By its id the room's 39004 is no more a stranger's to read.
	list := ofKind(member.query(map[string]any{"kinds": []int{39004}, "#d": []string{group}}), 39004)[0]
	if evs := sb.query(map[string]any{"ids": []string{list.ID}}); len(evs) != 0 {
		t.Errorf("a stranger's POST /query of the 39004 by id: %d events", len(evs))
	}
	if evs, err := srl.QuerySync(ctxT(t), nostr.Filter{IDs: []string{list.ID}}); err != nil || len(evs) != 0 {
		t.Errorf("a stranger's REQ of the 39004 by id: %d events (%v)", len(evs), err)
	}

	// Live: the leaves' 39004s reach a member's subscription, never a
	// stranger's (whose REQ ends EOSE or refused).
	live := map[string]any{"kinds": []int{39004}, "#d": []string{group}}
	sc := authRaw(t, r, stranger)
	if got := sc.reqAnswer("room", live); got != "EOSE" && !strings.HasPrefix(got, "restricted:") {
		t.Errorf("a stranger's live REQ of the room's 39004: %s", got)
	}
	mc := authRaw(t, r, members[0])
	if ids := mc.reqAll("room", live); len(ids) != 1 {
		t.Errorf("a member's live REQ of the room's 39004: %d stored", len(ids))
	}

	hooks(lk.ParticipantLeft)
	if got := participants(member); len(got) != 0 {
		t.Errorf("participants after 30 leaves at once: %d", len(got))
	}
	if _, ev := mc.event(); ev.Kind != 39004 {
		t.Errorf("a member's live subscription got kind %d", ev.Kind)
	}
	if parts, ok := sc.maybeRead(time.Second); ok && str(t, parts[0]) == "EVENT" {
		t.Errorf("a stranger's live subscription got the private room's %s", joinRaw(parts))
	}
}
