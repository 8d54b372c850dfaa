package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// twoInstances starts two relays (two App builds, as two Lambda instances
// would be) over one database with the given environment.
func twoInstances(t *testing.T, env map[string]string) (*Relay, *Relay) {
	t.Helper()
	dsn := testkit.NewDatabase(t)
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	var rs [2]*Relay
	for i := range rs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := Start(ctx, dsn, suiteOptions(Options{Log: log, Env: env}))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		rs[i] = r
	}
	return rs[0], rs[1]
}

// freshWindow waits out the end of a minute, so a test's hits share one
// fixed window.
func freshWindow() {
	if s := time.Now().Unix() % 60; s > 45 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
}

// TestRateLimitsHoldAcrossInstances (issue 11 item 18): one key's events and
// reads are counted across instances (Postgres counters): HTTP answers 429
// with Retry-After, WebSocket OK false / CLOSED rate-limited:; a channel
// owner and an allow-listed key are exempt; NIP-11 advertises the limits.
func TestRateLimitsHoldAcrossInstances(t *testing.T) {
	allowed := testkit.NewKey(t)
	a, b := twoInstances(t, map[string]string{
		"RATE_EVENTS_PER_MIN": "4", "RATE_READS_PER_MIN": "3", "RATE_ALLOW": allowed.Pub,
	})
	freshWindow()
	spammer, owner := testkit.NewKey(t), testkit.NewKey(t)

	// Events: two on instance a over HTTP, two on b over WebSocket, then
	// the fifth is refused on both.
	for i := 0; i < 2; i++ {
		if msg := a.submit(t, spammer, signed(t, spammer, 1, nil, "note "+strconv.Itoa(i))); msg != "" {
			t.Fatalf("event %d: %q", i, msg)
		}
	}
	rb := dial(t, b)
	login(t, rb, spammer)
	publish(t, rb, spammer, 1, nil, "three")
	publish(t, rb, spammer, 1, nil, "four")
	err := rb.Publish(ctxT(t), signed(t, spammer, 1, nil, "five"))
	if err == nil || !strings.Contains(err.Error(), "rate-limited:") {
		t.Fatalf("WebSocket fifth event: %v", err)
	}
	body, _ := json.Marshal(signed(t, spammer, 1, nil, "six"))
	url := a.HTTPURL + "/events"
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Authorization", newBridge(t, a, spammer).token(url, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if retry, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || retry < 1 || retry > 60 {
		t.Fatalf("HTTP sixth event: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// Reads: 3 per minute across both instances and both paths. A REQ
	// whose filters all have limit 0 reads no stored event: the session
	// store answers it (EOSE from the mark, no database statement), so it
	// is no read, only a message of its connection (counted against the
	// connection's message limit); the REQ that counts is one that reads.
	a.query(t, spammer, `[{"kinds":[1]}]`)
	b.count(t, spammer, `[{"kinds":[1]}]`)
	zero, err := rb.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{1}, LimitZero: true}})
	if err != nil {
		t.Fatal(err)
	}
	eose(t, zero)
	sub, err := rb.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{1}, Limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// go-nostr holds EOSE back until the stored events before it are
	// taken from Events: the one stored event is read first.
	next(t, sub)
	eose(t, sub)
	if code, out := a.send(t, spammer, "/query", `[{"kinds":[1]}]`); code != http.StatusTooManyRequests || !strings.Contains(string(out), "rate-limited:") {
		t.Fatalf("fourth read: %d %s", code, out)
	}
	// The fifth, a REQ over WebSocket on the other instance: CLOSED.
	over, err := rb.Subscribe(ctxT(t), nostr.Filters{{Kinds: []int{1}, Limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if reason := closedReason(t, over); !strings.HasPrefix(reason, "rate-limited:") {
		t.Fatalf("fifth read, a REQ: CLOSED %q, want rate-limited:", reason)
	}

	// A channel owner and an allow-listed key are exempt.
	ro := dial(t, a)
	login(t, ro, owner)
	createChannel(t, ro, owner, "open")
	for _, u := range []user{owner, allowed} {
		for i := 0; i < 6; i++ {
			if msg := b.submit(t, u, signed(t, u, 1, nil, "exempt "+strconv.Itoa(i))); msg != "" {
				t.Fatalf("exempt key, event %d: %q", i, msg)
			}
		}
	}

	// NIP-11 shows the limits.
	req, _ = http.NewRequest(http.MethodGet, b.HTTPURL+"/", nil)
	req.Header.Set("Accept", "application/nostr+json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc relayinfo.Document
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || doc.RateLimits == nil ||
		doc.RateLimits.EventsPerMinute != 4 || doc.RateLimits.ReadsPerMinute != 3 {
		t.Fatalf("NIP-11 rate limits: %+v, %v", doc.RateLimits, err)
	}
}
