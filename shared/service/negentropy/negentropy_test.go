package negentropy

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	neg "github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// TestMalformedNegentropyMessagesAreRefusedBeforeTheLibraryReadsThem is
// the attack table of a client's negentropy message: each is invalid:
// with a reason, and none reaches the library (whose id-list count would
// otherwise size an allocation).
func TestMalformedNegentropyMessagesAreRefusedBeforeTheLibraryReadsThem(t *testing.T) {
	cases := []struct{ name, msg, want string }{
		{"empty", "", "empty"},
		{"odd length", "611", "odd number"},
		{"not hex", "61zz", "not lowercase hex"},
		{"uppercase hex", "61AB", "not lowercase hex"},
		{"truncated varint", "6100ff", "truncated varint"},
		{"varint too long", "61ffffffffffffffff7f", "longer than 8 bytes"},
		{"bound id over 32 bytes", "610021" + strings.Repeat("00", 33) + "00", "longer than 32 bytes"},
		{"truncated bound id", "610020" + strings.Repeat("00", 4), "truncated bound id"},
		{"unknown mode", "61000003", "unknown mode"},
		{"truncated fingerprint", "61000001" + strings.Repeat("00", 8), "truncated fingerprint"},
		{"id list claims a billion ids", "61000002" + "83dcd6a900", "claims more ids"},
		{"id list truncated", "61000002" + "02" + strings.Repeat("ab", 32), "claims more ids"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckMessage(c.msg)
			r, ok := reject.As(err)
			if !ok || r.Prefix != reject.Invalid || !strings.Contains(r.Reason, c.want) {
				t.Fatalf("CheckMessage(%q) = %v, want invalid: …%s…", c.msg, err, c.want)
			}
		})
	}
	for _, good := range []string{"61", "62", "61000000", "61000002" + "01" + strings.Repeat("ab", 32)} {
		if err := CheckMessage(good); err != nil {
			t.Errorf("CheckMessage(%q) = %v, want accepted", good, err)
		}
	}
}

// TestReconcileAnswersAnotherVersionWithItsOwn: NIP-77's version rule, the
// server side answers a message of another version with its version alone.
func TestReconcileAnswersAnotherVersionWithItsOwn(t *testing.T) {
	out, err := Reconcile(nil, "62")
	if err != nil || out != fmt.Sprintf("%x", Version) {
		t.Fatalf("Reconcile(v2) = %q, %v; want %x", out, err, Version)
	}
}

// TestReconcileFindsTheExactDifferenceWithTheLibraryClient runs the
// library's client against Reconcile as the relay runs it (the item set
// given again each round), and checks the client learns exactly each
// side's own items, in a bounded number of rounds, with every relay frame
// within NegentropyFrameSize.
func TestReconcileFindsTheExactDifferenceWithTheLibraryClient(t *testing.T) {
	cases := []struct {
		name                   string
		n                      int
		serverOnly, clientOnly func(i int) bool
	}{
		// A few differences each side: fingerprints split down to them.
		{"sparse differences", 5000, func(i int) bool { return i%97 == 0 }, func(i int) bool { return i%89 == 0 }},
		// The client has nothing: the relay's 20,000 ids, an id list cut
		// across frames.
		{"empty client", 20000, func(int) bool { return true }, func(int) bool { return false }},
		// Every third differs: answers cut across frames while splitting.
		{"dense differences", 20000, func(i int) bool { return i%3 == 0 }, func(i int) bool { return i%3 == 1 && i%2 == 0 }},
		// 500 each side of 20,000 (the e2e test's shape).
		{"500 each side of 20,000", 20000, func(i int) bool { return i%40 == 0 }, func(i int) bool { return i%40 == 21 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { reconcileWithLibraryClient(t, c.n, c.serverOnly, c.clientOnly) })
	}
}

func reconcileWithLibraryClient(t *testing.T, n int, serverOnlyAt, clientOnlyAt func(int) bool) {
	var server []store.Item
	client := vector.New()
	onlyServer, onlyClient := map[string]bool{}, map[string]bool{}
	for i := range n {
		// Ids as nostr's are, hashes (go-nostr v0.52.3 places a bound
		// between two ids of one second by their first 16 bytes only, so
		// ids that share those, which hashes never do, would confuse it).
		id := fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint(i))))
		ts := int64(1_700_000_000 + i/3)
		switch {
		case serverOnlyAt(i):
			server = append(server, store.Item{CreatedAt: ts, ID: id})
			onlyServer[id] = true
		case clientOnlyAt(i):
			client.Insert(nostr.Timestamp(ts), id)
			onlyClient[id] = true
		default:
			server = append(server, store.Item{CreatedAt: ts, ID: id})
			client.Insert(nostr.Timestamp(ts), id)
		}
	}
	slices.SortFunc(server, func(a, b store.Item) int {
		return neg.ItemCompare(neg.Item{Timestamp: nostr.Timestamp(a.CreatedAt), ID: a.ID}, neg.Item{Timestamp: nostr.Timestamp(b.CreatedAt), ID: b.ID})
	})
	client.Seal()
	c := neg.New(client, relayinfo.NegentropyFrameSize)
	haves, haveNots := map[string]bool{}, map[string]bool{}
	done := make(chan struct{})
	go func() {
		for id := range c.Haves {
			haves[id] = true
		}
		done <- struct{}{}
	}()
	go func() {
		for id := range c.HaveNots {
			haveNots[id] = true
		}
		done <- struct{}{}
	}()
	msg := c.Start()
	rounds := 0
	for msg != "" {
		if err := CheckMessage(msg); err != nil {
			t.Fatalf("round %d: the library client's message refused: %v", rounds, err)
		}
		out, err := Reconcile(server, msg)
		if err != nil {
			t.Fatal(err)
		}
		if len(out)/2 > relayinfo.NegentropyFrameSize {
			t.Fatalf("round %d: frame of %d bytes", rounds, len(out)/2)
		}
		rounds++
		if rounds > 200 {
			t.Fatal("more than 200 rounds")
		}
		if msg, err = c.Reconcile(out); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	<-done
	if !maps(haves, onlyClient) || !maps(haveNots, onlyServer) {
		t.Fatalf("client has-only %d (want %d), relay has-only %d (want %d)", len(haves), len(onlyClient), len(haveNots), len(onlyServer))
	}
	t.Logf("%d items, %d rounds", n, rounds)
}

func maps(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// TestSessionKeyIsBeyondEveryREQSubscriptionID: a reconciliation's entry
// in the session store cannot be named (replaced, closed) by a REQ.
func TestSessionKeyIsBeyondEveryREQSubscriptionID(t *testing.T) {
	if k := SessionKey(""); len(k) <= relayinfo.MaxSubIDLength {
		t.Fatalf("session key prefix %q is %d long, not beyond %d", k, len(k), relayinfo.MaxSubIDLength)
	}
	if SessionKey("a") == SessionKey("b") {
		t.Fatal("two reconciliations share a key")
	}
}
