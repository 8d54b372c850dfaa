package sessions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestSubscribeReplacesAndLimits: storing a subscription replaces one of
// the same id (its channel index becomes exactly the new filters' pins)
// and, past the limit, refuses a new id changing nothing.
func TestSubscribeReplacesAndLimits(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry(sessionstest.DynamoDB(t).Store)
	opened, err := reg.Open(ctx, session.Connection{ID: "conn", Community: "c1", RelayURLs: []string{"ws://x"}, Challenge: "ab"})
	if err != nil {
		t.Fatal(err)
	}
	// Open returns the connection as recorded: what an instance caches
	// (a REQ's subscription is written knowing its expiry).
	if got, err := reg.Get(ctx, "conn"); err != nil || got.ConnectedAt != opened.ConnectedAt || got.ExpiresAt != opened.ExpiresAt || opened.ExpiresAt != ExpiresAt(opened.ConnectedAt) {
		t.Fatalf("opened %+v, recorded %+v (%v)", opened, got, err)
	}
	pinned := func(chs ...string) []nostr.Filter {
		return []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": chs}}}
	}
	// index is the channels among w, x, y and z whose audience holds sub
	// (every one for a subscription in the any-channel bucket).
	index := func(sub string) []string {
		var out []string
		for _, ch := range []string{"w", "x", "y", "z"} {
			subs, err := reg.AudienceRange(ctx, session.AudienceRangeParams{Community: "c1", Channels: []string{ch},
				Cutoff: 1 << 62, After: "", Through: "\U0010FFFF"})
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(subs, func(s session.Subscription) bool { return s.Sub == sub }) {
				out = append(out, ch)
			}
		}
		return out
	}
	if err := reg.Subscribe(ctx, "c1", "conn", "a", "pk", pinned("x", "y"), session.Limits{PerConnection: 2}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Subscribe(ctx, "c1", "conn", "a", "pk", pinned("y", "z"), session.Limits{PerConnection: 2}); err != nil {
		t.Fatal(err)
	}
	if got := index("a"); !slices.Equal(got, []string{"y", "z"}) {
		t.Fatalf("index of replaced subscription = %v, want [y z]", got)
	}
	if err := reg.Subscribe(ctx, "c1", "conn", "b", "pk", []nostr.Filter{{Kinds: []int{9}}}, session.Limits{PerConnection: 2}); err != nil {
		t.Fatal(err)
	}
	if got := index("b"); !slices.Equal(got, []string{"w", "x", "y", "z"}) {
		t.Fatalf("index of unpinned subscription = %v, want the any-channel bucket", got)
	}
	// Full: a third id is refused; replacing an existing one still works.
	err = reg.Subscribe(ctx, "c1", "conn", "c", "pk", pinned("x"), session.Limits{PerConnection: 2})
	if rej, ok := reject.As(err); !ok || rej.Prefix != reject.Restricted {
		t.Fatalf("third subscription: %v, want restricted:", err)
	}
	if got := index("c"); len(got) != 0 {
		t.Fatalf("refused subscription left index rows %v", got)
	}
	if err := reg.Subscribe(ctx, "c1", "conn", "b", "pk", pinned("x"), session.Limits{PerConnection: 2}); err != nil {
		t.Fatalf("replacing at the limit: %v", err)
	}
	if got := index("b"); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("index of b = %v, want [x]", got)
	}
}

func TestPins(t *testing.T) {
	got := Pins([]nostr.Filter{
		{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"c1", "c2"}}},
		{Kinds: []int{39000}, Tags: nostr.TagMap{"d": {"c3"}}},
		{Kinds: []int{39000, 1}, Tags: nostr.TagMap{"d": {"x"}}}, // not state kinds only: bucket
		{Tags: nostr.TagMap{"h": {}}},                            // matches nothing: no pin
	})
	if want := []string{"", "c1", "c2", "c3"}; !slices.Equal(got, want) {
		t.Fatalf("Pins = %q, want %q", got, want)
	}
	if got := Pins([]nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"c"}}}}); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("a pinned filter is in the bucket: %q", got)
	}
}

// Pins keep the read path's case rule (groupid.Canonical): an upper-case
// UUID #h pins the channel as stored (lower case); any other group id is
// kept exactly as sent (NIP-29 ids are case-sensitive).
func TestPinsCaseRule(t *testing.T) {
	const ch = "c0ffee00-0000-4000-8000-000000000000"
	if got := Pins([]nostr.Filter{{Tags: nostr.TagMap{"h": {strings.ToUpper(ch)}}}}); !slices.Equal(got, []string{ch}) {
		t.Fatalf("Pins = %q, want the stored (lower-case) channel", got)
	}
	if got := Pins([]nostr.Filter{{Tags: nostr.TagMap{"h": {"MyGroup"}}}}); !slices.Equal(got, []string{"MyGroup"}) {
		t.Fatalf("Pins = %q, want a non-UUID group id as sent", got)
	}
}

// TestSubscribeLimitExactUnderConcurrency: many REQs of one connection
// at once, each a new subscription id, store exactly the limit; every
// other is refused restricted: and leaves nothing stored.
func TestSubscribeLimitExactUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry(sessionstest.DynamoDB(t).Store)
	if _, err := reg.Open(ctx, session.Connection{ID: "conn", Community: "c1", RelayURLs: []string{"ws://x"}, Challenge: "ab"}); err != nil {
		t.Fatal(err)
	}
	const sent, max = 300, relayinfo.MaxSubscriptions
	errs := make([]error, sent)
	testkit.AtOnce(sent, func(i int) {
		errs[i] = reg.Subscribe(ctx, "c1", "conn", fmt.Sprintf("s%03d", i), "pk",
			[]nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {fmt.Sprint(i)}}}}, session.Limits{PerConnection: max})
	})
	stored := 0
	for i, err := range errs {
		if err == nil {
			stored++
			continue
		}
		if rej, ok := reject.As(err); !ok || rej.Prefix != reject.Restricted {
			t.Fatalf("subscription %d: %v, want stored or restricted:", i, err)
		}
	}
	keys := make([][2]string, sent)
	channels := make([]string, sent)
	for i := range keys {
		keys[i], channels[i] = [2]string{"conn", fmt.Sprintf("s%03d", i)}, fmt.Sprint(i)
	}
	subs, err := reg.SubscriptionsByKey(ctx, "c1", keys)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := reg.AudienceRange(ctx, session.AudienceRangeParams{Community: "c1", Channels: channels,
		Cutoff: 1 << 62, After: "", Through: "\U0010FFFF"})
	if err != nil {
		t.Fatal(err)
	}
	rows, index := len(subs), len(entries)
	if stored != max || rows != max || index != max {
		t.Fatalf("%d REQs at once: %d accepted, %d rows, %d index rows; want exactly %d", sent, stored, rows, index, max)
	}
}

// TestRowIndexesAWideREQOnce: a subscription is indexed under each channel
// its filters name while pins times the filters' size stays within
// PinBytes; past it (a REQ naming thousands of channels) under the
// any-channel bucket alone, one entry, where its filters still decide.
func TestRowIndexesAWideREQOnce(t *testing.T) {
	reg := NewRegistry(nil)
	channels := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("c%04d", i)
		}
		return out
	}
	for _, c := range []struct {
		name    string
		filters []nostr.Filter
		want    int // pins; -1: the bucket alone
	}{
		{"one channel", []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": channels(1)}}}, 1},
		{"a member's fifty channels", []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": channels(50)}}}, 50},
		{"a thousand channels", []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": channels(1000)}}}, -1},
		{"ten filters of a thousand", slices.Repeat([]nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": channels(1000)}}}, 10), -1},
		{"no channel", []nostr.Filter{{Kinds: []int{9}}}, -1},
	} {
		row, err := reg.Row("c", "conn", "s", "pk", c.filters)
		if err != nil {
			t.Fatal(err)
		}
		if c.want < 0 {
			if !slices.Equal(row.Pins, []string{""}) {
				t.Errorf("%s: pins %d (%.20q…), want the any-channel bucket alone", c.name, len(row.Pins), row.Pins)
			}
			continue
		}
		if len(row.Pins) != c.want || len(row.Pins)*len(row.Filters) > PinBytes {
			t.Errorf("%s: %d pins of %d bytes of filters, want %d within %d", c.name, len(row.Pins), len(row.Filters), c.want, PinBytes)
		}
	}
}
