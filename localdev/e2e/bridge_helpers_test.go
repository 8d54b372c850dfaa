package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// bridge is a Buzz client of the HTTP bridge: every request carries a
// fresh NIP-98 token of u.
type bridge struct {
	t   *testing.T
	r   *Relay
	u   user
	url string // base URL the token names and the request goes to
}

func newBridge(t *testing.T, r *Relay, u user) *bridge {
	return &bridge{t: t, r: r, u: u, url: r.HTTPURL}
}

// token is a NIP-98 Authorization value for POST url with body.
func (b *bridge) token(url string, body []byte) string {
	b.t.Helper()
	return b.u.Token(b.t, "POST", url, append([]byte{}, body...), time.Now())
}

// post sends body to path; the token names tokenURL+path ("" = b.url).
func (b *bridge) postAs(tokenURL, path string, body []byte) (int, []byte) {
	b.t.Helper()
	if tokenURL == "" {
		tokenURL = b.url
	}
	req, err := http.NewRequest(http.MethodPost, b.r.HTTPURL+path, bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Authorization", b.token(tokenURL+path, body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (b *bridge) post(path string, body []byte) (int, []byte) {
	b.t.Helper()
	return b.postAs("", path, body)
}

type eventsAnswer struct {
	EventID  string `json:"event_id"`
	Accepted bool   `json:"accepted"`
	Message  string `json:"message"`
}

// submit posts ev to /events and returns the answer (status 200 or 400).
func (b *bridge) submit(ev nostr.Event) eventsAnswer {
	b.t.Helper()
	raw, _ := json.Marshal(ev)
	status, body := b.post("/events", raw)
	var a eventsAnswer
	if status == http.StatusOK {
		if err := json.Unmarshal(body, &a); err != nil {
			b.t.Fatalf("/events answer %s", body)
		}
		return a
	}
	var e struct{ Error string }
	_ = json.Unmarshal(body, &e)
	if status != http.StatusBadRequest && status != http.StatusForbidden {
		b.t.Fatalf("/events: %d %s", status, body)
	}
	return eventsAnswer{EventID: ev.ID, Message: e.Error}
}

// accept submits ev and fails unless it was accepted.
func (b *bridge) accept(ev nostr.Event) {
	b.t.Helper()
	if a := b.submit(ev); !a.Accepted {
		b.t.Fatalf("kind %d refused: %s", ev.Kind, a.Message)
	}
}

// query posts filters to /query and returns the events; status must be 200.
func (b *bridge) query(filters ...map[string]any) []nostr.Event {
	b.t.Helper()
	body, _ := json.Marshal(filters)
	status, out := b.post("/query", body)
	if status != http.StatusOK {
		b.t.Fatalf("/query %s: %d %s", body, status, out)
	}
	var evs []nostr.Event
	if err := json.Unmarshal(out, &evs); err != nil {
		b.t.Fatalf("/query answer %s: %v", out, err)
	}
	return evs
}

func (b *bridge) count(filters ...map[string]any) int {
	b.t.Helper()
	body, _ := json.Marshal(filters)
	status, out := b.post("/count", body)
	if status != http.StatusOK {
		b.t.Fatalf("/count %s: %d %s", body, status, out)
	}
	var c struct{ Count int }
	_ = json.Unmarshal(out, &c)
	return c.Count
}

func ofKind(evs []nostr.Event, kind int) []nostr.Event {
	var out []nostr.Event
	for _, ev := range evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func idsOf(evs []nostr.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func hasID(evs []nostr.Event, id string) bool { return slices.Contains(idsOf(evs), id) }

// refused publishes ev over WebSocket and returns the OK false reason.
func refused(t *testing.T, rl *nostr.Relay, ev nostr.Event) string {
	t.Helper()
	err := rl.Publish(ctxT(t), ev)
	if err == nil {
		t.Fatalf("kind %d was accepted, want a refusal", ev.Kind)
	}
	return err.Error()
}

// wantPrefix fails unless reason contains a NIP-01 prefix p (go-nostr wraps
// the OK message in its error text).
func wantPrefix(t *testing.T, reason, p string) {
	t.Helper()
	if !strings.Contains(reason, p) {
		t.Fatalf("refusal %q, want %s", reason, p)
	}
}

// stateHead reads the current relay-signed state event of kind for ch.
func stateHead(t *testing.T, b *bridge, kind int, ch string) nostr.Event {
	t.Helper()
	evs := b.query(map[string]any{"kinds": []int{kind}, "#d": []string{ch}})
	if len(evs) != 1 {
		t.Fatalf("kind %d of %s: %d events", kind, ch, len(evs))
	}
	if evs[0].PubKey != b.r.App.Signer.PublicKey() {
		t.Fatalf("kind %d not signed by the relay", kind)
	}
	return evs[0]
}

// roleIn39001 is pk's role in a 39001 (["p", key, role]), "" when absent.
func roleIn39001(ev nostr.Event, pk string) string {
	for _, tag := range ev.Tags {
		if len(tag) >= 3 && tag[0] == "p" && tag[1] == pk {
			return tag[2]
		}
	}
	return ""
}

// roleIn39002 is pk's role as Buzz clients read a 39002:
// ["p", key, <relay hint>, role]. ok is false when pk is not listed.
func roleIn39002(ev nostr.Event, pk string) (role string, ok bool) {
	for _, tag := range ev.Tags {
		if len(tag) >= 2 && tag[0] == "p" && tag[1] == pk {
			if len(tag) >= 4 {
				return tag[3], true
			}
			return "", true
		}
	}
	return "", false
}
