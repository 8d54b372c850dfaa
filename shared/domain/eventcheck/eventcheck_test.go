package eventcheck_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func TestCheck(t *testing.T) {
	k := testkit.NewKey(t)
	now := time.Now()
	resign := func(mut func(*nostr.Event)) *nostr.Event {
		ev := k.Event(t, 9, "hi", nostr.Tag{"h", testkit.ChannelID()})
		mut(ev)
		if err := ev.Sign(k.Secret); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	cases := []struct {
		name string
		ev   *nostr.Event
		want string // "" = accepted; else the message prefix
	}{
		{"valid chat message", k.Event(t, 9, "hi", nostr.Tag{"h", testkit.ChannelID()}), ""},
		{"bad id", func() *nostr.Event { e := k.Event(t, 9, "hi"); e.ID = strings.Repeat("0", 64); return e }(), "invalid: id does not match"},
		{"id not hex", func() *nostr.Event { e := k.Event(t, 9, "hi"); e.ID = "xyz"; return e }(), "invalid: id must be"},
		{"bad signature", func() *nostr.Event { e := k.Event(t, 9, "hi"); e.Sig = strings.Repeat("a", 128); return e }(), "invalid: signature does not verify"},
		{"pubkey not hex", func() *nostr.Event { e := k.Event(t, 9, "hi"); e.PubKey = "Z"; return e }(), "invalid: pubkey must be"},
		{"tampered content", func() *nostr.Event { e := k.Event(t, 9, "hi"); e.Content = "bye"; return e }(), "invalid: id does not match"},
		{"too old", k.EventAt(t, now.Add(-901*time.Second), 9, "hi"), "invalid: created_at"},
		{"too new", k.EventAt(t, now.Add(901*time.Second), 9, "hi"), "invalid: created_at"},
		{"just inside the window", k.EventAt(t, now.Add(-890*time.Second), 9, "hi"), ""},
		{"content too large", k.Event(t, 9, strings.Repeat("x", eventcheck.MaxContentLen+1)), "invalid: content is"},
		{"content at the limit", k.Event(t, 9, strings.Repeat("x", eventcheck.MaxContentLen)), ""},
		// Issue 56: an event no WebSocket message could deliver is refused
		// at write time (content within its limit, tags past the rest).
		{"event too large to deliver", k.Event(t, 9, strings.Repeat("x", eventcheck.MaxContentLen), nostr.Tag{"alt", strings.Repeat("y", 8000)}), "invalid: the event takes"},
		{"content escaped past the limit", k.Event(t, 9, strings.Repeat("\x01", 30000)), "invalid: the event takes"},
		{"empty tag", resign(func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{}) }), "invalid: tag 1 is empty"},
		{"relay-only 39000", k.Event(t, 39000, ""), "restricted: kind 39000 is signed only by the relay"},
		{"relay-only 39001", k.Event(t, 39001, ""), "restricted:"},
		{"relay-only 39002", k.Event(t, 39002, ""), "restricted:"},
		{"relay-only 39003", k.Event(t, 39003, ""), "restricted:"},
		{"relay-only 39005", k.Event(t, 39005, ""), "restricted:"},
		{"relay-only 39006", k.Event(t, 39006, ""), "restricted:"},
		{"relay-only 44100", k.Event(t, 44100, ""), "restricted:"},
		{"relay-only 44101", k.Event(t, 44101, ""), "restricted:"},
		{"auth event", k.Event(t, 22242, ""), "invalid: kind 22242"},
		{"unknown kind", k.Event(t, 4242, ""), "restricted: unknown event kind"},
		// Issue 28: any kind in a group, NIP-22 comments, group ids.
		{"any kind in a group", k.Event(t, 4242, "", nostr.Tag{"h", "MyGroup_1"}), ""},
		{"relay-generated range in a group", k.Event(t, 39009, "", nostr.Tag{"h", "g"}), "restricted: unknown event kind"},
		{"NIP-29 LiveKit participants from a client", k.Event(t, 39004, "", nostr.Tag{"h", "g"}, nostr.Tag{"d", "g"}), "restricted: kind 39004 is signed only by the relay"},
		// Issue 51: a member's forged system row (40099 with an h tag was
		// taken by the group default row) and Buzz's other relay-made kinds.
		{"forged 40099 system row in a group", k.Event(t, 40099, `{"type":"member_joined"}`, nostr.Tag{"h", "g"}), "restricted: kind 40099 is signed only by the relay"},
		{"40099 outside a group", k.Event(t, 40099, `{"type":"channel_created"}`), "restricted: kind 40099 is signed only by the relay"},
		{"41001 DM created in a group", k.Event(t, 41001, "", nostr.Tag{"h", "g"}), "restricted: kind 41001 is signed only by the relay"},
		{"NIP-IA 8002 delta", k.Event(t, 8002, "", nostr.Tag{"p", k.Pub}), "restricted: kind 8002 is signed only by the relay"},
		{"NIP-IA 8003 delta in a group", k.Event(t, 8003, "", nostr.Tag{"h", "g"}), "restricted: kind 8003 is signed only by the relay"},
		{"NIP-IA 13535 list", k.Event(t, 13535, ""), "restricted: kind 13535 is signed only by the relay"},
		{"h with a forbidden character", k.Event(t, 9, "hi", nostr.Tag{"h", "a/b"}), "invalid: h tag"},
		{"h too long", k.Event(t, 9, "hi", nostr.Tag{"h", strings.Repeat("g", 65)}), "invalid: h tag"},
		{"h on a personal kind is ignored", k.Event(t, 0, "{}", nostr.Tag{"h", "a/b"}), ""},
		{"comment", k.Event(t, 1111, "c", nostr.Tag{"E", strings.Repeat("a", 64)}, nostr.Tag{"K", "11"}, nostr.Tag{"e", strings.Repeat("a", 64)}, nostr.Tag{"k", "11"}), ""},
		{"comment without root tags", k.Event(t, 1111, "c", nostr.Tag{"e", strings.Repeat("a", 64)}, nostr.Tag{"k", "11"}), "invalid: a kind 1111 comment needs its root tags"},
		{"comment without parent tags", k.Event(t, 1111, "c", nostr.Tag{"E", strings.Repeat("a", 64)}, nostr.Tag{"K", "11"}), "invalid: a kind 1111 comment needs its parent tags"},
		{"kind out of range", resign(func(e *nostr.Event) { e.Kind = 70000 }), "invalid: kind 70000"},
		{"ephemeral", k.Event(t, 20001, ""), ""},
		{"ephemeral range end", k.Event(t, 29999, ""), ""},
		{"gift wrap two days old (NIP-59)", k.EventAt(t, now.Add(-48*time.Hour), 1059, ""), ""},
		{"gift wrap older", k.EventAt(t, now.Add(-eventcheck.GiftWrapMaxAge-time.Second), 1059, ""), "invalid: created_at"},
		{"gift wrap from the future", k.EventAt(t, now.Add(901*time.Second), 1059, ""), "invalid: created_at"},
	}
	for _, kind := range []int{0, 1, 3, 5, 7, 9, 10, 11, 12, 1059, 40003, 9000, 9001, 9002, 9005, 9007, 9008, 9021, 9022, 10009, 30023, 10002, 10050, 10000, 10030, 30000, 30030, 9009} {
		cases = append(cases, struct {
			name string
			ev   *nostr.Event
			want string
		}{fmt.Sprintf("accepted kind %d", kind), k.Event(t, kind, ""), ""})
	}
	// Without remembering keys, and with every key's table built at once:
	// the verdicts are the same.
	for _, sigs := range []*sigverify.Verifier{nil, sigverify.New(sigverify.Options{After: 1})} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/remembering %v", c.name, sigs != nil), func(t *testing.T) {
				err := eventcheck.Check(c.ev, now, sigs)
				switch {
				case c.want == "" && err != nil:
					t.Fatalf("want accepted, got %v", err)
				case c.want != "" && err == nil:
					t.Fatalf("want %q, got accepted", c.want)
				case c.want != "" && !strings.HasPrefix(err.Error(), c.want):
					t.Fatalf("want prefix %q, got %q", c.want, err.Error())
				}
			})
		}
	}
}

// FuzzCheck feeds arbitrary JSON through the decoder and the checks: no
// input may panic, and whatever is accepted must really verify.
func FuzzCheck(f *testing.F) {
	k := testkit.NewKey(f)
	good, _ := k.Event(f, 9, "hi", nostr.Tag{"h", "x"}).MarshalJSON()
	f.Add(good)
	f.Add([]byte(`{"id":"","pubkey":"","created_at":0,"kind":9,"tags":[[]],"content":"","sig":""}`))
	f.Add([]byte(`{"kind":-1,"tags":null}`))
	sigs := sigverify.New(sigverify.Options{After: 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev nostr.Event
		if err := ev.UnmarshalJSON(data); err != nil {
			return
		}
		now := time.Unix(int64(ev.CreatedAt), 0)
		err := eventcheck.Check(&ev, now, nil)
		if again := eventcheck.Check(&ev, now, sigs); (again == nil) != (err == nil) {
			t.Fatalf("verdicts differ: %v without remembering, %v with", err, again)
		}
		if err == nil {
			if ok, _ := ev.CheckSignature(); !ok || !ev.CheckID() {
				t.Fatal("accepted an event that does not verify")
			}
			if eventcheck.Text("content", ev.Content) != nil {
				t.Fatal("accepted content Postgres cannot store")
			}
		}
	})
}
