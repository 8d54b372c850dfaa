package livekit_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/livekit"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func hook(t *testing.T, secret, event, room, identity string, at time.Time) (string, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"event": event, "room": map[string]string{"name": room}, "participant": map[string]string{"identity": identity}})
	tok, err := lk.Sign(lk.Claims{Issuer: cfg.APIKey, NotBefore: at.Unix(), Expires: at.Add(5 * time.Minute).Unix(), Sha256: lk.BodyHash(body)}, secret)
	if err != nil {
		t.Fatal(err)
	}
	return tok, body
}

// TestWebhookPublishesParticipants: a verified participant_joined and
// participant_left change the group's relay-signed 39004 (one
// participant tag per pubkey however many times it joined); a forged
// body, a wrong secret, an expired token, an oversized body, a room of no
// group and LiveKit off change nothing.
func TestWebhookPublishesParticipants(t *testing.T) {
	ctx := context.Background()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 4})
	reg := community.NewRegistry(st, id)
	reg.TTL = 0
	relayKey := testkit.RelayKey(t)
	ing := ingest.New(st, relayKey)
	owner, alice, bob := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	group := testkit.ChannelID()
	if out, err := ing.Submit(ctx, id, owner.Pub, owner.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", group})); err != nil || !out.Accepted {
		t.Fatalf("group: %+v %v", out, err)
	}
	now := time.Now()
	svc := &livekit.Service{Config: cfg, Guard: &guard.Guard{Communities: reg, Store: st}, Seats: st, Presence: ing, Now: func() time.Time { return now }}
	room := lk.RoomName(id, group)
	participants := func() []string {
		t.Helper()
		var raw, author string
		if err := db.QueryRow(ctx, `SELECT raw, pubkey FROM events WHERE community_id = $1 AND kind = 39004`, id).Scan(&raw, &author); err != nil {
			t.Fatalf("39004: %v", err)
		}
		var ev nostr.Event
		if err := json.Unmarshal([]byte(raw), &ev); err != nil || author != relayKey.PublicKey() {
			t.Fatalf("39004 %s by %s", raw, author)
		}
		if ok, _ := ev.CheckSignature(); !ok || ev.Tags.GetD() != group {
			t.Fatalf("39004 signature or d: %s", raw)
		}
		var out []string
		for _, tg := range ev.Tags {
			if tg[0] == "participant" {
				out = append(out, tg[1])
			}
		}
		sort.Strings(out)
		return out
	}
	send := func(secret, event, identity string) error {
		tok, body := hook(t, secret, event, room, identity, now)
		return svc.Webhook(ctx, tok, body)
	}
	for _, step := range []struct {
		event, identity string
		want            []string
	}{
		{lk.ParticipantJoined, lk.Identity(alice.Pub, []byte{1}), []string{alice.Pub}},
		{lk.ParticipantJoined, lk.Identity(alice.Pub, []byte{2}), []string{alice.Pub}},
		{lk.ParticipantJoined, lk.Identity(bob.Pub, []byte{3}), []string{alice.Pub, bob.Pub}},
		{lk.ParticipantLeft, lk.Identity(alice.Pub, []byte{1}), []string{alice.Pub, bob.Pub}},
		{lk.ParticipantLeft, lk.Identity(alice.Pub, []byte{2}), []string{bob.Pub}},
	} {
		if err := send(cfg.APISecret, step.event, step.identity); err != nil {
			t.Fatalf("%s %s: %v", step.event, step.identity, err)
		}
		sort.Strings(step.want)
		if got := participants(); strings.Join(got, ",") != strings.Join(step.want, ",") {
			t.Fatalf("after %s %s: %v, want %v", step.event, step.identity, got, step.want)
		}
	}

	tok, body := hook(t, cfg.APISecret, lk.ParticipantJoined, room, lk.Identity(alice.Pub, []byte{9}), now)
	forged := []byte(strings.Replace(string(body), alice.Pub, owner.Pub, 1))
	wrongTok, _ := hook(t, "not-the-secret", lk.ParticipantJoined, room, lk.Identity(alice.Pub, []byte{9}), now)
	oldTok, oldBody := hook(t, cfg.APISecret, lk.ParticipantJoined, room, lk.Identity(alice.Pub, []byte{9}), now.Add(-time.Hour))
	noRoomTok, noRoomBody := hook(t, cfg.APISecret, lk.ParticipantJoined, lk.RoomName(id, "no-such-group"), lk.Identity(alice.Pub, []byte{9}), now)
	for _, a := range []struct {
		name string
		svc  *livekit.Service
		auth string
		body []byte
		want error
	}{
		{"forged body", svc, tok, forged, livekit.ErrWebhookAuth},
		{"wrong secret", svc, wrongTok, body, livekit.ErrWebhookAuth},
		{"expired", svc, oldTok, oldBody, livekit.ErrWebhookAuth},
		{"no token", svc, "", body, livekit.ErrWebhookAuth},
		{"oversized", svc, tok, make([]byte, lk.MaxWebhookBody+1), livekit.ErrWebhookTooLarge},
		{"livekit off", &livekit.Service{Presence: ing}, tok, body, livekit.ErrOff},
	} {
		if err := a.svc.Webhook(ctx, a.auth, a.body); !errors.Is(err, a.want) {
			t.Errorf("%s: %v, want %v", a.name, err, a.want)
		}
	}
	if err := svc.Webhook(ctx, noRoomTok, noRoomBody); err == nil || !strings.HasPrefix(err.Error(), "invalid:") {
		t.Errorf("room of no group: %v", err)
	}
	if got := participants(); strings.Join(got, ",") != bob.Pub {
		t.Errorf("a refused webhook changed the participants: %v", got)
	}
}
