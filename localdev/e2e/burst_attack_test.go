package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestPinsAndNegentropyHoldUnderThirtyAtOnce: 30 of the same request at
// once on this change's new surfaces. An admin's 30 concurrent 9010s over
// POST /events are each answered (200, or a 4xx refusal), never a 5xx,
// and leave one pin list, relay-signed, naming one of the lists sent; 30
// NEG-OPENs at once, each on its own authenticated socket, are each
// answered NEG-MSG or a prefixed NEG-ERR, and every socket still serves.
func TestPinsAndNegentropyHoldUnderThirtyAtOnce(t *testing.T) {
	r := newRelay(t)
	owner, rl := loggedIn(t, r)
	ch := createChannel(t, rl, owner, "open")
	var msgs []string
	for i := range 3 {
		msgs = append(msgs, publish(t, rl, owner, 9, nostr.Tags{{"h", ch}}, fmt.Sprint("m", i)).ID)
	}
	b := newBridge(t, r, owner)
	const n = 30
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		raw, _ := json.Marshal(signed(t, owner, 9010, nostr.Tags{{"h", ch}, {"e", msgs[i%3]}}, fmt.Sprint(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = b.post("/events", raw)
		}()
	}
	wg.Wait()
	for i, st := range statuses {
		if st >= 500 || (st != http.StatusOK && st/100 != 4) {
			t.Errorf("9010 %d of %d at once: %d", i+1, n, st)
		}
	}
	pins, err := rl.QuerySync(ctxT(t), nostr.Filter{Kinds: []int{39005}, Tags: nostr.TagMap{"d": {ch}}})
	if err != nil || len(pins) != 1 {
		t.Fatalf("pin lists after the burst: %d (%v)", len(pins), err)
	}
	if e := pins[0].Tags.Find("e"); e == nil || !strings.Contains(strings.Join(msgs, " "), e[1]) {
		t.Fatalf("the pin list names none of the messages: %v", pins[0].Tags)
	}

	filter := map[string]any{"#h": []string{ch}}
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = authRaw(t, r, owner)
	}
	answers := make([][]json.RawMessage, n)
	for i, rc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc.sendJSON([]any{"NEG-OPEN", "n", filter, "6100000200"})
			answers[i] = rc.read()
		}()
	}
	wg.Wait()
	for i, a := range answers {
		switch verb := str(t, a[0]); verb {
		case "NEG-MSG":
		case "NEG-ERR":
			if why := str(t, a[2]); !strings.Contains(why, ": ") {
				t.Errorf("NEG-OPEN %d: unprefixed NEG-ERR %q", i+1, why)
			}
		default:
			t.Errorf("NEG-OPEN %d of %d at once: %s", i+1, n, joinRaw(a))
		}
	}
	for i, rc := range conns {
		rc.sendJSON([]any{"COUNT", "c", filter})
		if got := rc.expect("COUNT"); !strings.Contains(string(got[2]), `"count"`) {
			t.Errorf("socket %d after the burst: %s", i+1, joinRaw(got))
		}
	}
}
