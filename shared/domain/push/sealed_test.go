package push

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// NIP-9a's sealed form as Flotilla signs it: d and p in public, the rest
// in the content. Sealed finds the key it is sealed to only in that form;
// Unseal keeps the public d and takes the sealed tags, never a sealed d
// or p; the result parses as a subscription.
func TestSealedSubscription(t *testing.T) {
	self := strings.Repeat("a", 64)
	flotilla := &nostr.Event{Kind: 30390, Content: "sealed…", Tags: nostr.Tags{{"d", "123"}, {"p", self}}}
	if got, ok := Sealed(flotilla); !ok || got != self {
		t.Fatalf("Sealed(Flotilla's) = %q, %v", got, ok)
	}
	for name, ev := range map[string]*nostr.Event{
		"public form":   {Kind: 30390, Content: "x", Tags: nostr.Tags{{"d", "1"}, {"p", self}, {"relay", "wss://r.example"}}},
		"no content":    {Kind: 30390, Tags: nostr.Tags{{"d", "1"}, {"p", self}}},
		"no p":          {Kind: 30390, Content: "x", Tags: nostr.Tags{{"d", "1"}}},
		"an empty p":    {Kind: 30390, Content: "x", Tags: nostr.Tags{{"d", "1"}, {"p"}}},
		"public, tags ": {Kind: 30390, Tags: nostr.Tags{{"d", "1"}, {"relay", "wss://r.example"}, {"filter", "{}"}}},
	} {
		if _, ok := Sealed(ev); ok {
			t.Errorf("%s: taken as sealed", name)
		}
	}
	plain := `[["relay","wss://relay.example"],["callback","https://cb.example/x"],["ignore","{\"#h\":[[]]}"],` +
		`["filter","{\"kinds\":[9041,31923,11,30402,9]}"],["filter","{\"kinds\":[1111],\"#K\":[\"11\"]}"],["d","other"],["p","` + strings.Repeat("b", 64) + `"]]`
	ev, err := Unseal(flotilla, plain)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Tags[0][1] != "123" || len(ev.Tags.GetAll([]string{"d"})) != 1 || ev.Tags.Find("p") != nil {
		t.Errorf("unsealed tags %v: want the public d only, no sealed d or p", ev.Tags)
	}
	if flotilla.Tags.Find("relay") != nil {
		t.Error("Unseal changed the event it read")
	}
	s, err := ParseSubscription(ev, []string{"relay.example"}, Policy{})
	if err != nil {
		t.Fatalf("Flotilla's unsealed subscription: %v", err)
	}
	if s.D != "123" || len(s.Filters) != 2 || len(s.Ignore) != 0 || s.Callback != "https://cb.example/x" {
		t.Errorf("parsed %+v: want d 123, 2 filters, the empty ignore dropped", s)
	}
	for name, p := range map[string]string{"not JSON": "hello", "an object": `{"relay":"x"}`, "numbers": `[[1,2]]`} {
		if _, err := Unseal(flotilla, p); err == nil {
			t.Errorf("%s: unsealed", name)
		} else if r, ok := reject.As(err); !ok || r.Prefix != reject.Invalid {
			t.Errorf("%s: %v, want invalid:", name, err)
		}
	}
}

// Flotilla's muted rooms, {"#h": [mutedRooms]}, read flattened: an ignore
// of the rooms named ignores them; one of no room ignores nothing (never
// everything); other shapes are still refused.
func TestFilterTagValuesNestedOneLevel(t *testing.T) {
	f, none, err := parseFilter("ignore", `{"#h":[["muted","quiet"]]}`)
	if err != nil || none || len(f.Tags["h"]) != 2 || f.Tags["h"][1] != "quiet" {
		t.Fatalf("muted rooms: %v %v %v", f, none, err)
	}
	ev := &nostr.Event{Kind: 9, PubKey: strings.Repeat("b", 64), Tags: nostr.Tags{{"h", "muted"}}}
	if _, ok := Match([]nostr.Filter{{Kinds: []int{9}}}, []nostr.Filter{f}, ev, "muted"); ok {
		t.Error("a message of a muted room is pushed")
	}
	if _, none, err := parseFilter("ignore", `{"#h":[[]]}`); err != nil || !none {
		t.Errorf("no muted room: none %v, %v; want an ignore that matches nothing", none, err)
	}
	if _, none, err := parseFilter("filter", `{"kinds":[9],"#h":[]}`); err != nil || !none {
		t.Errorf("an empty condition: none %v, %v", none, err)
	}
	for _, bad := range []string{`{"#h":[[["deep"]]]}`, `{"#h":[[1]]}`, `{"kinds":[["9"]]}`, `[1]`} {
		if _, _, err := parseFilter("ignore", bad); err == nil {
			t.Errorf("%s: read", bad)
		}
	}
}
