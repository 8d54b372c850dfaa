package push

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// The callback policy keeps callbacks off the relay's own network: https
// only, no private, loopback, link-local or metadata address literal, no
// local names; the local exception allows http and this machine.
func TestCallbackPolicyRefusesPrivateAndPlainTargets(t *testing.T) {
	strict, local := Policy{}, Policy{AllowPrivate: true}
	cases := []struct {
		url           string
		strict, local bool // accepted
	}{
		{"https://push.example.com/cb", true, true},
		{"https://push.example.com:8443/cb?x=1", true, true},
		{"http://push.example.com/cb", false, true},
		{"http://127.0.0.1:9000/cb", false, true},
		{"https://127.0.0.1/cb", false, true},
		{"https://[::1]/cb", false, true},
		{"https://10.0.0.5/cb", false, true},
		{"https://169.254.169.254/latest/meta-data", false, true},
		{"https://[fd00::1]/cb", false, true},
		{"https://[::ffff:192.168.1.1]/cb", false, true},
		{"https://100.64.0.1/cb", false, true},
		{"https://0.0.0.0/cb", false, true},
		{"https://localhost/cb", false, true},
		{"https://metadata.google.internal/cb", false, true},
		// Issue 51: forms of non-public addresses the old policy let in.
		{"https://[::127.0.0.1]/cb", false, true},
		{"https://[::ffff:0:127.0.0.1]/cb", false, true},
		{"https://[64:ff9b:1::a00:1]/cb", false, true},
		{"https://[2002:7f00:1::1]/cb", false, true},
		{"https://[fec0::1]/cb", false, true},
		{"https://[2001::1]/cb", false, true},
		{"https://127.1/cb", false, true},
		{"https://2130706433/cb", false, true},
		{"https://[2606:4700::1111]/cb", true, true},
		{"https://user:pw@push.example.com/cb", false, false},
		{"ftp://push.example.com/cb", false, false},
		{"/relative", false, false},
		{"https://push.example.com/" + strings.Repeat("a", MaxCallbackLength), false, false},
	}
	for _, c := range cases {
		if got := CheckCallback(c.url, strict) == nil; got != c.strict {
			t.Errorf("strict: %q accepted = %v, want %v", c.url, got, c.strict)
		}
		if got := CheckCallback(c.url, local) == nil; got != c.local {
			t.Errorf("local: %q accepted = %v, want %v", c.url, got, c.local)
		}
		if err := CheckCallback(c.url, strict); err != nil {
			if e, ok := reject.As(err); !ok || e.Prefix != reject.Invalid {
				t.Errorf("%q refused with %v, want invalid:", c.url, err)
			}
		}
	}
}

func subscription(tags ...nostr.Tag) *nostr.Event {
	return &nostr.Event{Kind: 30390, PubKey: strings.Repeat("a", 64), Tags: tags}
}

func TestParseSubscription(t *testing.T) {
	base := func(extra ...nostr.Tag) *nostr.Event {
		return subscription(append([]nostr.Tag{{"d", "x"}, {"relay", "wss://relay.example/"}, {"callback", "https://cb.example/x"}}, extra...)...)
	}
	hosts := []string{"relay.example"}
	good, err := ParseSubscription(base(nostr.Tag{"filter", `{"kinds":[9]}`}, nostr.Tag{"ignore", `{"authors":["` + strings.Repeat("b", 64) + `"]}`}, nostr.Tag{"include_event", "true"}), hosts, Policy{})
	if err != nil {
		t.Fatalf("a good subscription: %v", err)
	}
	if len(good.Filters) != 1 || len(good.Ignore) != 1 || !good.IncludeEvent || good.Callback != "https://cb.example/x" {
		t.Errorf("parsed %+v", good)
	}
	tooMany := base()
	for range MaxFilters + 1 {
		tooMany.Tags = append(tooMany.Tags, nostr.Tag{"filter", `{"kinds":[9]}`})
	}
	for name, ev := range map[string]*nostr.Event{
		"no d":          subscription(nostr.Tag{"relay", "wss://relay.example"}, nostr.Tag{"callback", "https://cb.example"}, nostr.Tag{"filter", "{}"}),
		"another relay": subscription(nostr.Tag{"d", "x"}, nostr.Tag{"relay", "wss://other.example"}, nostr.Tag{"callback", "https://cb.example"}, nostr.Tag{"filter", "{}"}),
		"no filter":     base(),
		"too many":      tooMany,
		"ids":           base(nostr.Tag{"filter", `{"ids":["` + strings.Repeat("c", 64) + `"]}`}),
		"search":        base(nostr.Tag{"filter", `{"search":"hi"}`}),
		"huge filter":   base(nostr.Tag{"filter", `{"kinds":[` + strings.Repeat("9,", MaxFilterBytes) + `9]}`}),
		"bad expiry":    base(nostr.Tag{"filter", "{}"}, nostr.Tag{"expiration", "soon"}),
	} {
		if _, err := ParseSubscription(ev, hosts, Policy{}); err == nil {
			t.Errorf("%s: accepted", name)
		} else if e, ok := reject.As(err); !ok || e.Prefix != reject.Invalid {
			t.Errorf("%s: %v, want invalid:", name, err)
		}
	}
}

func TestMatchHonoursIgnoreAndStoredChannel(t *testing.T) {
	ev := &nostr.Event{Kind: 9, PubKey: strings.Repeat("b", 64), Tags: nostr.Tags{{"h", "chan"}}}
	filters := []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"chan"}}}}
	if _, ok := Match(filters, nil, ev, "chan"); !ok {
		t.Error("a kind 9 of the channel does not match")
	}
	if _, ok := Match(filters, nil, ev, "other"); ok {
		t.Error("#h matched the event's tag instead of its stored channel")
	}
	if _, ok := Match(filters, []nostr.Filter{{Authors: []string{ev.PubKey}}}, ev, "chan"); ok {
		t.Error("an ignored author matched")
	}
}

func TestCallbackBodyCapsTheEvent(t *testing.T) {
	small, _ := CallbackBody("id", "wss://r", `{"id":"id"}`, true)
	if !strings.Contains(string(small), `"event"`) {
		t.Errorf("include_event dropped a small event: %s", small)
	}
	big, _ := CallbackBody("id", "wss://r", `"`+strings.Repeat("x", MaxPayloadBytes)+`"`, true)
	if strings.Contains(string(big), `"event"`) || len(big) > MaxPayloadBytes {
		t.Errorf("a body over the cap carries the event (%d bytes)", len(big))
	}
	without, _ := CallbackBody("id", "wss://r", `{"id":"id"}`, false)
	if strings.Contains(string(without), `"event"`) {
		t.Errorf("no include_event, yet the event: %s", without)
	}
}

func TestBackoffGrowsAndIsBounded(t *testing.T) {
	want := []time.Duration{0, time.Second, 4 * time.Second, 16 * time.Second, 64 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		if got := Backoff(i); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i, got, w)
		}
	}
}

func lease(tags ...nostr.Tag) *nostr.Event { return &nostr.Event{Kind: 30350, Tags: tags} }

func TestLeaseTags(t *testing.T) {
	now := int64(1_800_000_000)
	exp := strconv.FormatInt(now+3600, 10)
	if _, _, _, err := LeaseTags(lease(nostr.Tag{"d", "i"}, nostr.Tag{"expiration", exp}, nostr.Tag{"exec", "1"}, nostr.Tag{"alt", "Push lease"}), now); err != nil {
		t.Fatalf("good tags: %v", err)
	}
	for name, ev := range map[string]*nostr.Event{
		"extra tag":     lease(nostr.Tag{"d", "i"}, nostr.Tag{"expiration", exp}, nostr.Tag{"exec", "1"}, nostr.Tag{"p", "x"}),
		"two d":         lease(nostr.Tag{"d", "i"}, nostr.Tag{"d", "j"}, nostr.Tag{"expiration", exp}, nostr.Tag{"exec", "1"}),
		"extra value":   lease(nostr.Tag{"d", "i", "more"}, nostr.Tag{"expiration", exp}, nostr.Tag{"exec", "1"}),
		"no exec":       lease(nostr.Tag{"d", "i"}, nostr.Tag{"expiration", exp}),
		"expired":       lease(nostr.Tag{"d", "i"}, nostr.Tag{"expiration", strconv.FormatInt(now-LeaseSkew, 10)}, nostr.Tag{"exec", "1"}),
		"ttl too long":  lease(nostr.Tag{"d", "i"}, nostr.Tag{"expiration", strconv.FormatInt(now+MaxLeaseTTL+1, 10)}, nostr.Tag{"exec", "1"}),
		"long d":        lease(nostr.Tag{"d", strings.Repeat("d", MaxLeaseD+1)}, nostr.Tag{"expiration", exp}, nostr.Tag{"exec", "1"}),
		"two alt":       lease(nostr.Tag{"d", "i"}, nostr.Tag{"expiration", exp}, nostr.Tag{"exec", "1"}, nostr.Tag{"alt", "a"}, nostr.Tag{"alt", "b"}),
		"no expiration": lease(nostr.Tag{"d", "i"}, nostr.Tag{"exec", "1"}),
	} {
		if _, _, _, err := LeaseTags(ev, now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestLeaseFilterIsNarrowedAndExact(t *testing.T) {
	self := strings.Repeat("a", 64)
	other := strings.Repeat("b", 64)
	ok := []string{
		`{"kinds":[9],"#p":["` + self + `"]}`,
		`{"kinds":[9,7],"#h":["0b7e3f5a-6c1d-4e2b-9a8f-1d2c3b4a5e6f"]}`,
		`{"kinds":[1059],"authors":["` + other + `"],"#e":["` + other + `"]}`,
	}
	for _, f := range ok {
		if _, err := LeaseFilter(json.RawMessage(f), self, true); err != nil {
			t.Errorf("%s refused: %v", f, err)
		}
	}
	bad := map[string]string{
		"not narrowed":     `{"kinds":[9]}`,
		"#e alone":         `{"kinds":[9],"#e":["` + other + `"]}`,
		"another's #p":     `{"kinds":[9],"#p":["` + other + `"]}`,
		"prefix author":    `{"kinds":[9],"authors":["abcd"]}`,
		"uppercase author": `{"kinds":[9],"authors":["` + strings.ToUpper(other) + `"]}`,
		"no kinds":         `{"#p":["` + self + `"]}`,
		"ephemeral kind":   `{"kinds":[20001],"#p":["` + self + `"]}`,
		"since":            `{"kinds":[9],"#p":["` + self + `"],"since":1}`,
		"limit":            `{"kinds":[9],"#p":["` + self + `"],"limit":1}`,
		"search":           `{"kinds":[9],"#p":["` + self + `"],"search":"x"}`,
		"other tag":        `{"kinds":[9],"#p":["` + self + `"],"#t":["x"]}`,
		"empty #h":         `{"kinds":[9],"#h":[]}`,
		"bad #h":           `{"kinds":[9],"#h":["no spaces"]}`,
		"too many #h":      `{"kinds":[9],"#h":[` + strings.TrimSuffix(strings.Repeat(`"g",`, MaxLeaseH+1), ",") + `]}`,
	}
	for name, f := range bad {
		if _, err := LeaseFilter(json.RawMessage(f), self, true); err == nil {
			t.Errorf("%s: %s accepted", name, f)
		}
	}
	// An ignore filter need not be narrowed.
	if _, err := LeaseFilter(json.RawMessage(`{"kinds":[9]}`), self, false); err != nil {
		t.Errorf("an unnarrowed ignore filter refused: %v", err)
	}
}

func TestParseLeaseIsStrict(t *testing.T) {
	self := strings.Repeat("a", 64)
	x := Executor{Origin: "wss://relay.example", Profiles: []AppProfile{{ID: "app/ios", Transport: "apns"}}}
	good := `{"v":1,"origin":"wss://relay.example","app_profile":"app/ios","transport":"apns","endpoint":"grant","generation":2,"active":true,"subscriptions":[{"filter":{"kinds":[9],"#p":["` + self + `"]},"class":"default"}]}`
	if l, f, _, err := ParseLease([]byte(good), self, x); err != nil || l.Generation != 2 || len(f) != 1 {
		t.Fatalf("good lease: %v %+v", err, l)
	}
	revoke := `{"v":1,"origin":"wss://relay.example","generation":3,"active":false}`
	if l, _, _, err := ParseLease([]byte(revoke), self, x); err != nil || l.Active {
		t.Fatalf("revocation: %v", err)
	}
	bad := map[string]string{
		"duplicate key":      strings.Replace(good, `"v":1,`, `"v":1,"v":1,`, 1),
		"unknown field":      strings.Replace(good, `"v":1,`, `"v":1,"note":"x",`, 1),
		"origin mismatch":    strings.Replace(good, "wss://relay.example", "wss://relay.example/", 1),
		"transport mismatch": strings.Replace(good, `"transport":"apns"`, `"transport":"fcm"`, 1),
		"unknown profile":    strings.Replace(good, `"app/ios"`, `"app/web"`, 1),
		"generation 0":       strings.Replace(good, `"generation":2`, `"generation":0`, 1),
		"v 2":                strings.Replace(good, `"v":1`, `"v":2`, 1),
		"urgent":             strings.Replace(good, `"class":"default"`, `"class":"urgent"`, 1),
		"revocation extras":  strings.Replace(revoke, `"active":false`, `"active":false,"endpoint":"x"`, 1),
		"no subscriptions":   strings.Replace(good, `[{"filter":{"kinds":[9],"#p":["`+self+`"]},"class":"default"}]`, `[]`, 1),
		"not JSON":           `{"v":1`,
		"two values":         good + good,
	}
	for name, p := range bad {
		if _, _, _, err := ParseLease([]byte(p), self, x); err == nil {
			t.Errorf("%s: accepted", name)
		} else if e, ok := reject.As(err); !ok || e.Prefix != reject.Invalid {
			t.Errorf("%s: %v, want invalid:", name, err)
		}
	}
}

// The caps count per host, not per URL: paths, queries, ports, letter
// case and a trailing dot of one host share one counter, as do the
// addresses of one IPv6 /64; another host, another /64 and another
// community count apart.
func TestCallbackRatesPerHost(t *testing.T) {
	same := []string{
		"https://push.example.com/a", "https://push.example.com/b?x=1", "https://PUSH.example.com:8443/a",
		"https://push.example.com./c#", "http://push.example.com/?q=" + strings.Repeat("z", 40),
	}
	want := CallbackRates("c1", same[0])
	for _, u := range same[1:] {
		if got := CallbackRates("c1", u); got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s counts as %v, want %v", u, got, want)
		}
	}
	if want[0].PerMinute != CallbacksPerHostPerMinute || want[1].PerMinute != DeliveriesPerCommunityPerMinute {
		t.Errorf("caps %v", want)
	}
	if a, b := RateHost("https://[2606:4700::1]/x"), RateHost("https://[2606:4700::ffff:1]/y"); a != b {
		t.Errorf("one /64 counts as %s and %s", a, b)
	}
	for _, other := range []string{"https://other.example.com/a", "https://[2606:4700:0:1::1]/x", "https://a.push.example.com/a"} {
		if RateHost(other) == RateHost(same[0]) {
			t.Errorf("%s shares push.example.com's counter", other)
		}
	}
	if CallbackRates("c2", same[0])[1] == want[1] {
		t.Error("two communities share one community cap")
	}
	if WakeRates("c1", "g1")[0] == WakeRates("c1", "g2")[0] || WakeRates("c1", "g1")[1] != want[1] {
		t.Error("wakes: one counter per endpoint, the community's shared with callbacks")
	}
}
