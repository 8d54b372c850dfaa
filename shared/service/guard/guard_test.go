package guard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip43"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const id = "default"

// fixture is a guard over a fresh database: the default community with
// an operator, and keys in every standing the door tells apart.
type fixture struct {
	g    *guard.Guard
	st   *store.Store
	reg  *community.Registry
	keys map[string]string // standing → pubkey ("anonymous": "")
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 4})
	reg := community.NewRegistry(st, id)
	reg.TTL = 0
	f := &fixture{g: &guard.Guard{Communities: reg, Store: st, Log: testkit.Quiet()}, st: st, reg: reg, keys: map[string]string{"anonymous": ""}}
	ing := ingest.New(st, testkit.RelayKey(t))
	now := time.Now().Unix()
	past, future := now-60, now+3600
	rules := map[string]struct {
		rule    string
		expires *int64
	}{
		"banned": {"ban", nil}, "ban expired": {"ban", &past},
		"timed out": {"timeout", &future}, "timeout expired": {"timeout", &past},
	}
	for _, who := range []string{"operator", "channel member", "stranger", "banned", "ban expired", "timed out", "timeout expired"} {
		k := testkit.NewKey(t)
		f.keys[who] = k.Pub
		if who == "operator" {
			if err := community.AddOperator(ctx, st, id, k.Pub); err != nil {
				t.Fatal(err)
			}
		}
		if who != "stranger" { // everyone else is a member of a channel of their own
			ev := k.Event(t, kinds.CreateGroup, "", nostr.Tag{"h", testkit.ChannelID()}, nostr.Tag{"name", who})
			if out, err := ing.Submit(ctx, id, k.Pub, ev); err != nil || !out.Accepted {
				t.Fatalf("%s's channel: %+v %v", who, out, err)
			}
		}
		if r, ok := rules[who]; ok {
			if _, err := db.Exec(ctx, `INSERT INTO community_pubkey_rules (community_id, pubkey, rule, created_at, expires_at) VALUES ($1, $2, $3, 0, $4)`,
				id, k.Pub, r.rule, r.expires); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

var actions = []struct {
	name string
	a    guard.Action
}{
	{"publish", guard.Publish}, {"read", guard.Read}, {"count", guard.Count}, {"message", guard.Message},
	{"upload", guard.Upload}, {"list media", guard.ListMedia}, {"delete media", guard.DeleteMedia}, {"manage", guard.Manage},
	{"read media", guard.ReadMedia}, {"vanish", guard.Vanish}, {"join", guard.Join},
}

// answer is what the door says: "" admitted, else the refusal's text.
func (f *fixture) answer(t *testing.T, who string, a guard.Action) string {
	t.Helper()
	_, err := f.g.Admit(context.Background(), guard.Door{Community: id, Caller: guard.Caller{Pubkey: f.keys[who]}, Action: a})
	if err == nil {
		return ""
	}
	if _, ok := reject.As(err); !ok {
		t.Fatalf("%s, action %d: not a refusal: %v", who, a, err)
	}
	return err.Error()
}

// TestDoorTableHoldsForEveryAction is the door's case table: each caller's
// standing against each action, as one guard decides it for every
// transport. Media now reads bans and timeouts as publish does: an
// expired ban no longer blocks an upload, a timeout in force does.
func TestDoorTableHoldsForEveryAction(t *testing.T) {
	f := newFixture(t)
	const (
		ok        = ""
		banned    = "blocked: this pubkey is banned from this community"
		timedOut  = "blocked: this pubkey is timed out in this community until the timeout expires"
		noChannel = "restricted: only members of this community's channels may upload or list media here"
		notOp     = "restricted: only this community's operators may manage it"
		media     = "auth-required: media needs an Authorization header (a kind 24242 event or a NIP-98 token)"
	)
	// publish, read, count, message, upload, list, delete, manage, read
	// media (a blob's own rule decides who reads it: shared/service/media),
	// vanish, join (an invite's claim at every door: a banned key is
	// refused here, whichever door it came through)
	publish := "auth-required: publishing needs NIP-42 AUTH first; answer the AUTH challenge"
	table := map[string][11]string{
		"anonymous": {publish,
			"auth-required: reading needs NIP-42 AUTH first; answer the AUTH challenge",
			"auth-required: COUNT needs NIP-42 AUTH first; answer the AUTH challenge",
			ok, media, media, media, "auth-required: NIP-86 needs a NIP-98 Authorization header", ok,
			publish, "auth-required: joining needs the joining key's NIP-42 AUTH or NIP-98 token first"},
		"operator":       {ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok},
		"channel member": {ok, ok, ok, ok, ok, ok, ok, notOp, ok, ok, ok},
		"stranger":       {ok, ok, ok, ok, noChannel, noChannel, ok, notOp, ok, ok, ok},
		// A publish's bans are decided in its write's transaction
		// (store.Tx.BansCheck, the same predicates); a banned key may
		// still vanish (its data goes, its ban stays).
		"banned":          {ok, ok, ok, ok, banned, banned, banned, notOp, ok, ok, banned},
		"ban expired":     {ok, ok, ok, ok, ok, ok, ok, notOp, ok, ok, ok},
		"timed out":       {ok, ok, ok, ok, timedOut, ok, ok, notOp, ok, ok, ok},
		"timeout expired": {ok, ok, ok, ok, ok, ok, ok, notOp, ok, ok, ok},
	}
	for who, want := range table {
		for i, a := range actions {
			if got := f.answer(t, who, a.a); got != want[i] {
				t.Errorf("%s, %s: %q, want %q", who, a.name, got, want[i])
			}
		}
	}
}

// TestNIP43GateAtEveryDoor: a community that enforces membership refuses a
// key with no role on publish, reads, counts, uploads and listing, and
// among live delivery's readers; its operators and members pass.
func TestNIP43GateAtEveryDoor(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.st.CommunitiesSetMembershipEnforced(ctx, id, true); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Tx(ctx, id, func(tx *store.Tx) error {
		_, err := tx.RelayMembersInsert(ctx, f.keys["channel member"], nip43.Member, f.keys["operator"], 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A request to vanish is stored (its content served as the
	// tombstone): gated as any publish. A claim is how a key with no
	// role becomes one: never gated.
	gated := map[guard.Action]bool{guard.Publish: true, guard.Read: true, guard.Count: true, guard.Upload: true, guard.ListMedia: true,
		guard.ReadMedia: true, guard.Vanish: true}
	for _, a := range actions {
		for _, who := range []string{"operator", "channel member"} {
			if got := f.answer(t, who, a.a); got != "" && a.a != guard.Manage {
				t.Errorf("%s, %s: %q", who, a.name, got)
			}
		}
		got := f.answer(t, "timeout expired", a.a) // a channel member, no relay member
		if gated[a.a] != (got == nip43.ErrNotMember.Error()) {
			t.Errorf("a key with no role, %s: %q", a.name, got)
		}
	}
	readers := []string{f.keys["operator"], f.keys["channel member"], f.keys["stranger"]}
	refused, err := f.g.Readers(ctx, id, readers)
	if err != nil || len(refused) != 1 || refused[f.keys["stranger"]] != nip43.ErrNotMember {
		t.Fatalf("live readers: %v %v, want the stranger refused only", refused, err)
	}
}

// TestDisabledCommunityRefusedAtEveryDoor: once a community is disabled
// (seen within the registry's TTL, here 0) every action of every key is
// refused restricted:, 404 over HTTP, as a host that serves nothing, and
// live delivery turns every reader away.
func TestDisabledCommunityRefusedAtEveryDoor(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.st.CommunitiesDisable(ctx, id); err != nil {
		t.Fatal(err)
	}
	for who := range f.keys {
		for _, a := range actions {
			_, err := f.g.Admit(ctx, guard.Door{Community: id, Caller: guard.Caller{Pubkey: f.keys[who]}, Action: a.a})
			r, ok := reject.As(err)
			if !ok || r.Prefix != reject.Restricted || reject.Map(err).Status != 404 || !community.Unknown(err) {
				t.Errorf("%s, %s in a disabled community: %v", who, a.name, err)
			}
		}
	}
	_, err := f.g.Admit(ctx, guard.Door{Community: "nowhere", Caller: guard.Caller{Pubkey: f.keys["operator"]}, Action: guard.Read})
	if _, dis := f.g.Admit(ctx, guard.Door{Community: id, Caller: guard.Caller{Pubkey: f.keys["operator"]}, Action: guard.Read}); err == nil || err.Error() != dis.Error() {
		t.Fatalf("an unknown community answers %v, a disabled one %v: they must not differ", err, dis)
	}
	refused, err := f.g.Readers(ctx, id, []string{f.keys["operator"], f.keys["stranger"]})
	if err != nil || len(refused) != 2 {
		t.Fatalf("live readers of a disabled community: %v %v", refused, err)
	}
}

// TestClaimBudgetCountsWhatAStrangerCannotMultiply: a claim costs its key
// first, then its source address (an IPv6 address by its /64), then, for
// a code the community minted only, the community; fresh keys from fresh
// addresses guessing codes never use up the community's budget, a key or
// an address past its own is refused alone, and a banned key is refused
// at the door whatever its code.
func TestClaimBudgetCountsWhatAStrangerCannotMultiply(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.g.Limiter = ratelimit.New(f.st, ratelimit.Limits{ClaimsPerMinute: 2, AddressClaimsPerMinute: 3, CommunityClaimsPerMinute: 2})
	for time.Now().Second() > 45 { // one fixed minute window for the whole test
		time.Sleep(time.Second)
	}
	claim := func(pub, addr, code string) string {
		t.Helper()
		_, err := f.g.Admit(ctx, guard.Door{Community: id, Action: guard.Join, Claim: code, Caller: guard.Caller{Pubkey: pub, Address: addr}})
		if err == nil {
			return ""
		}
		if _, ok := reject.As(err); !ok {
			t.Fatalf("not a refusal: %v", err)
		}
		return err.Error()
	}
	madeUp := func() string { return testkit.NewKey(t).Pub[:40] }
	for i := 0; i < 10; i++ { // 20 made-up claims: past the community's 2, none refused
		k := testkit.NewKey(t).Pub
		for j := 0; j < 2; j++ {
			if got := claim(k, fmt.Sprintf("192.0.2.%d", i), madeUp()); got != "" {
				t.Fatalf("fresh key %d, claim %d: %q", i, j, got)
			}
		}
	}
	k := testkit.NewKey(t).Pub
	claim(k, "198.51.100.1", madeUp())
	claim(k, "198.51.100.1", madeUp())
	if got := claim(k, "198.51.100.1", madeUp()); !strings.Contains(got, "by this key") {
		t.Fatalf("a key's third claim: %q", got)
	}
	if got := claim(testkit.NewKey(t).Pub, "198.51.100.1", madeUp()); got != "" {
		t.Fatalf("another key from the first key's address (its key-refused claim cost the address nothing): %q", got)
	}
	if got := claim(testkit.NewKey(t).Pub, "198.51.100.1", madeUp()); !strings.Contains(got, "from this address") {
		t.Fatalf("an address's fourth claim: %q", got)
	}
	for i, addr := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"} {
		if got := claim(testkit.NewKey(t).Pub, addr, madeUp()); got != "" {
			t.Fatalf("IPv6 claim %d: %q", i, got)
		}
	}
	if got := claim(testkit.NewKey(t).Pub, "2001:db8:1:2::9", madeUp()); !strings.Contains(got, "from this address") {
		t.Fatalf("a fourth claim from one /64: %q", got)
	}

	// A minted code costs the community too: its third claim is refused.
	code := "a-real-invite-code"
	now := time.Now().Unix()
	if ok, err := f.st.InvitesInsert(ctx, id, invite.Hash(code), f.keys["operator"], now, now+3600, 0); err != nil || !ok {
		t.Fatalf("mint: %v %v", ok, err)
	}
	for i := 0; i < 2; i++ {
		if got := claim(testkit.NewKey(t).Pub, fmt.Sprintf("203.0.113.%d", i), code); got != "" {
			t.Fatalf("real claim %d: %q", i, got)
		}
	}
	if got := claim(testkit.NewKey(t).Pub, "203.0.113.9", code); !strings.Contains(got, "in this community") {
		t.Fatalf("a third real claim: %q", got)
	}
	if got := claim(testkit.NewKey(t).Pub, "203.0.113.10", madeUp()); got != "" {
		t.Fatalf("a made-up claim once the community's budget is used: %q", got)
	}
	if got := claim(f.keys["banned"], "203.0.113.11", code); got != records.ErrBanned.Error() {
		t.Fatalf("a banned key's claim: %q", got)
	}
}

// TestKeylessCallerRefusedAuthRequiredWhileTheDatabaseIsAway: when the
// community's state cannot be read (the database is away and the
// registry has no fresh copy), a caller without a key is refused
// auth-required: for every action that needs a key (the refusal it gets
// whether or not the community is served), not told to retry; an action
// that needs no key, and every action of an authenticated caller, gets
// the database's unavailability (answered as resuming).
func TestKeylessCallerRefusedAuthRequiredWhileTheDatabaseIsAway(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "postgres://postgres@127.0.0.1:1/nowhere?sslmode=disable", store.Options{ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	reg := community.NewRegistry(st, id)
	reg.TTL = 0
	g := &guard.Guard{Communities: reg, Store: st, Log: testkit.Quiet()}
	needsKey := map[guard.Action]string{
		guard.Publish: "auth-required: publishing", guard.Read: "auth-required: reading", guard.Count: "auth-required: COUNT",
		guard.Upload: "auth-required: media", guard.ListMedia: "auth-required: media", guard.DeleteMedia: "auth-required: media",
		guard.Manage: "auth-required: NIP-86", guard.Vanish: "auth-required: publishing", guard.Join: "auth-required: joining",
	}
	for _, a := range actions {
		for _, pub := range []string{"", testkit.NewKey(t).Pub} {
			_, err := g.Admit(ctx, guard.Door{Community: id, Caller: guard.Caller{Pubkey: pub}, Action: a.a})
			want, keyless := needsKey[a.a]
			if pub == "" && keyless {
				if err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("keyless %s while the database is away: %v, want %s…", a.name, err, want)
				}
				continue
			}
			if reject.Map(err).Text != reject.Resuming {
				t.Errorf("%s (key %t) while the database is away: %v, want the resuming answer", a.name, pub != "", err)
			}
		}
	}
}
