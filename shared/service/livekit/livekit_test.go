package livekit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	lk "github.com/buzzrelay/relay/shared/domain/livekit"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/livekit"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const id = "default"

var cfg = lk.Config{URL: "wss://lk.example", APIKey: "APIkey1", APISecret: "a-secret-of-32-or-more-characters!"}

// TestTokenOnlyForCurrentMembers mints a LiveKit token for a current member
// of a stream group (its claims name the member and the group's room) and
// refuses, with a clear restricted:/blocked: reason, a stranger, a member
// since removed, a banned member, a group that does not exist (in the
// stranger's words: no oracle), a group without a room, and every caller
// when LiveKit is off.
func TestTokenOnlyForCurrentMembers(t *testing.T) {
	ctx := context.Background()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 4})
	reg := community.NewRegistry(st, id)
	reg.TTL = 0
	g := &guard.Guard{Communities: reg, Store: st, Log: testkit.Quiet()}
	ing := ingest.New(st, testkit.RelayKey(t))
	owner, member, removed, banned, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	room, workflow := testkit.ChannelID(), testkit.ChannelID()
	submit := func(k testkit.Key, kind int, tags ...nostr.Tag) {
		t.Helper()
		ev := k.Event(t, kind, "", tags...)
		if out, err := ing.Submit(ctx, id, k.Pub, ev); err != nil || !out.Accepted {
			t.Fatalf("kind %d: %+v %v", kind, out, err)
		}
	}
	submit(owner, kinds.CreateGroup, nostr.Tag{"h", room}, nostr.Tag{"name", "room"})
	submit(owner, kinds.CreateGroup, nostr.Tag{"h", workflow}, nostr.Tag{"name", "wf"}, nostr.Tag{"channel_type", "workflow"})
	for _, k := range []testkit.Key{member, removed, banned} {
		submit(owner, kinds.PutUser, nostr.Tag{"h", room}, nostr.Tag{"p", k.Pub})
		submit(owner, kinds.PutUser, nostr.Tag{"h", workflow}, nostr.Tag{"p", k.Pub})
	}
	submit(owner, kinds.RemoveUser, nostr.Tag{"h", room}, nostr.Tag{"p", removed.Pub})
	if _, err := db.Exec(ctx, `INSERT INTO community_pubkey_rules (community_id, pubkey, rule, created_at) VALUES ($1, $2, 'ban', 0)`, id, banned.Pub); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	svc := &livekit.Service{Config: cfg, Guard: g, Seats: st, Now: func() time.Time { return now }}

	grant, err := svc.Token(ctx, guard.Caller{Pubkey: member.Pub}, id, room)
	if err != nil {
		t.Fatalf("member: %v", err)
	}
	if grant.ServerURL != cfg.URL {
		t.Errorf("server_url %q", grant.ServerURL)
	}
	c, err := lk.Verify(grant.Token, cfg.APIKey, cfg.APISecret, now)
	if err != nil {
		t.Fatalf("minted token: %v", err)
	}
	if lk.PubkeyOf(c.Subject) != member.Pub || c.Video == nil || c.Video.Room != lk.RoomName(id, room) || !c.Video.RoomJoin ||
		c.NotBefore != now.Unix() || c.Expires != now.Add(lk.TokenTTL).Unix() {
		t.Errorf("claims %+v video %+v", c, c.Video)
	}
	again, _ := svc.Token(ctx, guard.Caller{Pubkey: member.Pub}, id, room)
	if c2, _ := lk.Verify(again.Token, cfg.APIKey, cfg.APISecret, now); c2.Subject == c.Subject {
		t.Error("two tokens of one key share an identity: the key could not join twice")
	}

	off := &livekit.Service{Guard: g, Seats: st}
	for _, r := range []struct {
		name   string
		svc    *livekit.Service
		pubkey string
		group  string
		want   error
		prefix reject.Prefix
	}{
		{"stranger", svc, stranger.Pub, room, livekit.ErrNotMember, reject.Restricted},
		{"removed member", svc, removed.Pub, room, livekit.ErrNotMember, reject.Restricted},
		{"banned member", svc, banned.Pub, room, records.ErrBanned, reject.Blocked},
		{"wrong group", svc, member.Pub, "no-such-group", livekit.ErrNotMember, reject.Restricted},
		{"group without a room", svc, member.Pub, workflow, livekit.ErrNoRoom, reject.Restricted},
		{"livekit off", off, member.Pub, room, livekit.ErrOff, reject.Restricted},
		{"no key", svc, "", room, nil, reject.AuthRequired},
	} {
		_, err := r.svc.Token(ctx, guard.Caller{Pubkey: r.pubkey}, id, r.group)
		rj, ok := reject.As(err)
		if !ok || rj.Prefix != r.prefix || (r.want != nil && !errors.Is(err, r.want)) {
			t.Errorf("%s: %v, want %v (%s:)", r.name, err, r.want, r.prefix)
		}
	}
}
