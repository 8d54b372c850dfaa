package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// posted is one POST /events answer.
type posted struct {
	status int
	body   string
}

// postAll sends evs to POST /events at once, each with a NIP-98 token of
// its author (by its pubkey in keys), as that many clients would.
func postAll(t *testing.T, r *Relay, keys map[string]user, evs []nostr.Event) []posted {
	t.Helper()
	out := make([]posted, len(evs))
	bodies := make([][]byte, len(evs))
	tokens := make([]string, len(evs))
	for i, ev := range evs {
		bodies[i], _ = json.Marshal(ev)
		tokens[i] = keys[ev.PubKey].Token(t, "POST", r.HTTPURL+"/events", bodies[i], time.Now())
	}
	client := &http.Client{Timeout: time.Minute}
	testkit.AtOnce(len(evs), func(i int) {
		req, err := http.NewRequest(http.MethodPost, r.HTTPURL+"/events", bytes.NewReader(bodies[i]))
		if err != nil {
			out[i] = posted{body: err.Error()}
			return
		}
		req.Header.Set("Authorization", tokens[i])
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			out[i] = posted{body: err.Error()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out[i] = posted{status: resp.StatusCode, body: string(b)}
	})
	return out
}

// allAccepted fails unless every answer is 200 with accepted true and no
// message; it reports how many were 5xx.
func allAccepted(t *testing.T, what string, answers []posted) {
	t.Helper()
	bad, fivexx := 0, 0
	for i, a := range answers {
		var ans eventsAnswer
		if a.status == http.StatusOK && json.Unmarshal([]byte(a.body), &ans) == nil && ans.Accepted && ans.Message == "" {
			continue
		}
		bad++
		if a.status >= 500 {
			fivexx++
		}
		if bad <= 3 {
			t.Errorf("%s %d: %d %s", what, i, a.status, a.body)
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d not accepted (%d answered 5xx)", what, bad, len(answers), fivexx)
	}
}

// membersOf is the sorted p keys of ch's 39002, read over POST /query.
func membersOf(t *testing.T, b *bridge, ch string) []string {
	t.Helper()
	var out []string
	for _, tag := range stateHead(t, b, 39002, ch).Tags {
		if len(tag) >= 2 && tag[0] == "p" {
			out = append(out, tag[1])
		}
	}
	slices.Sort(out)
	return out
}

// joinsThenLeaves runs n concurrent 9021 joins to one open group over the
// HTTP bridge, then the same keys' n concurrent 9022 leaves, with the
// sessions' S3 path on (make dev's default): every write accepted, the
// 39002 exact after each burst.
func joinsThenLeaves(t *testing.T, n int) {
	r := StartTest(t, Options{})
	owner := testkit.NewKey(t)
	b := newBridge(t, r, owner)
	ch := createChannelID()
	b.accept(signed(t, owner, 9007, nostr.Tags{{"h", ch}, {"name", "busy"}, {"visibility", "open"}}, ""))

	keys := map[string]user{owner.Pub: owner}
	joins := make([]nostr.Event, n)
	want := []string{owner.Pub}
	for i := range joins {
		k := testkit.NewKey(t)
		keys[k.Pub] = k
		joins[i] = signed(t, k, 9021, nostr.Tags{{"h", ch}}, "")
		want = append(want, k.Pub)
	}
	allAccepted(t, "join", postAll(t, r, keys, joins))
	slices.Sort(want)
	if got := membersOf(t, b, ch); !slices.Equal(got, want) {
		t.Fatalf("39002 after %d joins lists %d keys, want %d", n, len(got), len(want))
	}

	leaves := make([]nostr.Event, n)
	for i, j := range joins {
		leaves[i] = signed(t, keys[j.PubKey], 9022, nostr.Tags{{"h", ch}}, "")
	}
	allAccepted(t, "leave", postAll(t, r, keys, leaves))
	if got := membersOf(t, b, ch); !slices.Equal(got, []string{owner.Pub}) {
		t.Fatalf("39002 after %d leaves lists %d keys, want the owner alone", n, len(got))
	}
}

// TestConcurrentJoinsAllAccepted (issue 36): 30 concurrent joins, then 30
// concurrent leaves, to one group over POST /events as clients send them:
// all accepted, no 5xx, 39002 exact. On 970cdaa 23 joins and 25 leaves
// answered 503.
func TestConcurrentJoinsAllAccepted(t *testing.T) { joinsThenLeaves(t, 30) }

// TestConcurrentJoinsAllAcceptedAt200 (issue 36): the same with 200 keys.
func TestConcurrentJoinsAllAcceptedAt200(t *testing.T) {
	if testing.Short() {
		t.Skip("200 concurrent writers: not in -short")
	}
	joinsThenLeaves(t, 200)
}

// TestConcurrentModerationRacingJoinsOverBridge (issue 36): an admin's
// 9000 adds and 9001 removals and an owner's 9002 edits racing members'
// 9021 joins in one group over POST /events: all accepted, no 5xx, and
// the final 39001 and 39002 exact.
func TestConcurrentModerationRacingJoinsOverBridge(t *testing.T) {
	r := StartTest(t, Options{})
	owner, admin := testkit.NewKey(t), testkit.NewKey(t)
	b := newBridge(t, r, owner)
	ch := createChannelID()
	b.accept(signed(t, owner, 9007, nostr.Tags{{"h", ch}, {"name", "busy"}, {"visibility", "open"}}, ""))
	b.accept(signed(t, owner, 9000, nostr.Tags{{"h", ch}, {"p", admin.Pub, "admin"}}, ""))
	keys := map[string]user{owner.Pub: owner, admin.Pub: admin}
	want := []string{owner.Pub, admin.Pub}
	var evs []nostr.Event
	const n = 15
	for i := range n {
		gone, added, joiner := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
		keys[joiner.Pub] = joiner
		newBridge(t, r, gone).accept(signed(t, gone, 9021, nostr.Tags{{"h", ch}}, ""))
		want = append(want, added.Pub, joiner.Pub)
		evs = append(evs,
			signed(t, admin, 9001, nostr.Tags{{"h", ch}, {"p", gone.Pub}}, ""),
			signed(t, admin, 9000, nostr.Tags{{"h", ch}, {"p", added.Pub, "member"}}, ""),
			signed(t, joiner, 9021, nostr.Tags{{"h", ch}}, ""),
			signed(t, owner, 9002, nostr.Tags{{"h", ch}, {"about", fmt.Sprint("edit ", i)}}, ""))
	}
	allAccepted(t, "moderation", postAll(t, r, keys, evs))
	slices.Sort(want)
	if got := membersOf(t, b, ch); !slices.Equal(got, want) {
		t.Fatalf("39002 lists %d keys, want %d", len(got), len(want))
	}
	if roleIn39001(stateHead(t, b, 39001, ch), admin.Pub) != "admin" {
		t.Fatal("39001 lost the admin")
	}
}
