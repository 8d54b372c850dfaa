package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestREQNamingTenThousandChannels: a REQ of 10 filters of 1,000 #h
// values each (as many as one message carries, most of them channels that
// do not exist) is answered like any other, its subscription indexed
// once, in the any-channel bucket (sessions.PinBytes), not once per
// channel: with the sessions in DynamoDB, a handful of requests instead
// of thousands of writes (each carrying the filters), which held the REQ
// past the client's wait. Live, it still gets an event of a channel it
// names, and nothing of one it does not. Both session stores.
func TestREQNamingTenThousandChannels(t *testing.T) {
	t.Run("dynamodb", func(t *testing.T) {
		reqs := &awssdk.Requests{}
		r := StartTest(t, Options{Requests: reqs})
		alice := testkit.NewKey(t)
		ba := newBridge(t, r, alice)
		named, other := newChannel(t, ba, "open"), newChannel(t, ba, "open")
		rc := authRaw(t, r, alice)
		req := []any{"REQ", "wide"}
		for i := range 10 {
			hs := make([]string, 1000)
			for j := range hs {
				hs[j] = fmt.Sprintf("%x", i*1000+j)
			}
			if i == 9 {
				hs[999] = named
			}
			req = append(req, map[string]any{"kinds": []int{9}, "#h": hs})
		}
		before := ddbRequests(reqs)
		rc.sendJSON(req)
		if parts := rc.read(); str(t, parts[0]) != "EOSE" {
			t.Fatalf("the wide REQ: %s, want EOSE", joinRaw(parts))
		}
		if n := ddbRequests(reqs) - before; n > 10 {
			t.Errorf("the wide REQ made %d DynamoDB requests, want a handful", n)
		}
		ba.accept(signed(t, alice, 9, nostr.Tags{{"h", other}}, "not named"))
		in := signed(t, alice, 9, nostr.Tags{{"h", named}}, "named")
		ba.accept(in)
		parts := rc.read()
		if str(t, parts[0]) != "EVENT" || !strings.Contains(string(parts[2]), in.ID) {
			t.Fatalf("live: %s, want the event of the named channel (and not the other's before it)", joinRaw(parts))
		}
	})
}

// ddbRequests is how many DynamoDB requests reqs counted.
func ddbRequests(reqs *awssdk.Requests) int64 {
	var n int64
	for k, v := range reqs.Counts() {
		if strings.HasPrefix(strings.ToLower(k), "dynamodb") {
			n += v
		}
	}
	return n
}

// TestREQFiltersNearTheMessageLimit: REQs whose one filter fills a
// message with characters stored longer than sent (each < written as
// six bytes by a default JSON encoder, U+2028 escaped) are subscriptions
// like any (with the sessions in DynamoDB the item once held 720 KB, over
// DynamoDB's 400 KB, and the REQ got error:); invalid UTF-8 is refused
// invalid:. Each answered REQ holds its place, and the next subscription
// of the connection still gets live events. Both session stores.
func TestREQFiltersNearTheMessageLimit(t *testing.T) {
	t.Run("dynamodb", func(t *testing.T) {
		r := StartTest(t, Options{})
		alice := testkit.NewKey(t)
		ba := newBridge(t, r, alice)
		ch := newChannel(t, ba, "open")
		rc := authRaw(t, r, alice)
		for i, c := range []struct{ value, want string }{
			{strings.Repeat("<", 120000), "EOSE"},
			{strings.Repeat("&>", 60000), "EOSE"},
			{strings.Repeat("\u2028", 40000), "EOSE"},
			{strings.Repeat("\xff", 120000), "CLOSED"},
		} {
			sub := fmt.Sprintf("big%d", i)
			rc.send(`["REQ","` + sub + `",{"kinds":[9],"#t":["` + c.value + `"]}]`)
			parts := rc.read()
			if str(t, parts[0]) != c.want || (c.want == "CLOSED" && !strings.HasPrefix(str(t, parts[2]), "invalid:")) {
				j := joinRaw(parts)
				t.Fatalf("REQ %s: %s, want %s", sub, j[:min(len(j), 200)], c.want)
			}
		}
		rc.sendJSON([]any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{ch}}})
		if parts := rc.read(); str(t, parts[0]) != "EOSE" {
			t.Fatalf("REQ after them: %s", joinRaw(parts))
		}
		in := signed(t, alice, 9, nostr.Tags{{"h", ch}}, "hello")
		ba.accept(in)
		if parts := rc.read(); str(t, parts[0]) != "EVENT" || !strings.Contains(string(parts[2]), in.ID) {
			t.Fatalf("live: %s, want the event", joinRaw(parts))
		}
	})
}
