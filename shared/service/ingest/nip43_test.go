package ingest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// relayRows is the community's relay_members as key:role, by key.
func (h *harness) relayRows() []string {
	h.t.Helper()
	rows, err := h.db.Query(context.Background(), `SELECT pubkey || ':' || role FROM relay_members WHERE community_id = $1 ORDER BY pubkey`, community)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// relayEvents are the stored relay-signed events of kind, newest first.
func (h *harness) relayEvents(kind int) []*nostr.Event {
	h.t.Helper()
	rows, err := h.db.Query(context.Background(), `SELECT raw FROM events WHERE community_id = $1 AND kind = $2 AND deleted_at IS NULL ORDER BY created_at DESC, id`, community, kind)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []*nostr.Event
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			h.t.Fatal(err)
		}
		var ev nostr.Event
		if err := ev.UnmarshalJSON([]byte(raw)); err != nil {
			h.t.Fatal(err)
		}
		if ok, _ := ev.CheckSignature(); !ok || ev.PubKey != h.relay.PublicKey() {
			h.t.Fatalf("kind %d is not signed by the relay key", kind)
		}
		out = append(out, &ev)
	}
	return out
}

// list is the one stored 13534's member tags as key:role.
func (h *harness) list() []string {
	h.t.Helper()
	evs := h.relayEvents(kinds.RelayMembershipList)
	if len(evs) != 1 {
		h.t.Fatalf("%d stored 13534 lists, want exactly one", len(evs))
	}
	if len(evs[0].Tags) == 0 || evs[0].Tags[0][0] != "-" {
		h.t.Fatalf("13534 tags %v do not start with NIP-70's [\"-\"]", evs[0].Tags)
	}
	var out []string
	for _, t := range evs[0].Tags[1:] {
		out = append(out, t[1]+":"+t[2])
	}
	return out
}

// TestRelayMembership runs 9030-9032 and 28936 against real Postgres: the
// permission matrix, the rows, and the relay-signed 8000/8001 and 13534
// each change publishes in its transaction (and lists for delivery).
func TestRelayMembership(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	owner, admin, alice, bob := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	if err := h.st.OperatorsInsert(ctx, community, owner.Pub); err != nil {
		t.Fatal(err)
	}
	delivered := func(out []*nostr.Event) []int {
		var ks []int
		for _, ev := range out {
			ks = append(ks, ev.Kind)
		}
		return ks
	}

	// An owner adds an admin; the command itself is neither stored nor
	// delivered, the 8000 and the 13534 are both.
	out := h.ok(owner.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", admin.Pub}, nostr.Tag{"role", "admin"}))
	if got := delivered(out.Committed); !slices.Equal(got, []int{kinds.RelayMemberAdded, kinds.RelayMembershipList}) {
		t.Fatalf("9030 committed kinds %v, want 8000 then 13534", got)
	}
	if n := len(h.relayEvents(kinds.RelayAddMember)); n != 0 {
		t.Fatalf("the 9030 was stored (%d)", n)
	}
	added := h.relayEvents(kinds.RelayMemberAdded)
	if len(added) != 1 || added[0].Tags[0][0] != "-" || added[0].Tags[1][1] != admin.Pub {
		t.Fatalf("8000 = %v", added)
	}
	// The admin adds alice (a member by default), but may not grant admin.
	h.ok(admin.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", alice.Pub}))
	h.refused(admin.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", bob.Pub}, nostr.Tag{"role", "admin"}), "restricted:")
	// A member adds nobody; a re-add changes nothing and publishes nothing.
	h.refused(alice.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", bob.Pub}), "restricted:")
	if out := h.ok(owner.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", alice.Pub}, nostr.Tag{"role", "admin"})); len(out.Committed) != 0 {
		t.Fatalf("a re-add published %v", delivered(out.Committed))
	}
	wantRows := []string{admin.Pub + ":admin", alice.Pub + ":member"}
	slices.Sort(wantRows)
	if got := h.relayRows(); !slices.Equal(got, wantRows) {
		t.Fatalf("rows %v, want %v", got, wantRows)
	}
	// The list names the owner first, then every row by key.
	wantList := append([]string{owner.Pub + ":owner"}, wantRows...)
	if got := h.list(); !slices.Equal(got, wantList) {
		t.Fatalf("13534 lists %v, want %v", got, wantList)
	}

	// 9032: owners only; never owner; never one's own.
	h.refused(admin.Event(t, kinds.RelayChangeRole, "", nostr.Tag{"p", alice.Pub}, nostr.Tag{"role", "admin"}), "restricted:")
	h.refused(owner.Event(t, kinds.RelayChangeRole, "", nostr.Tag{"p", alice.Pub}, nostr.Tag{"role", "owner"}), "invalid:")
	h.refused(owner.Event(t, kinds.RelayChangeRole, "", nostr.Tag{"p", bob.Pub}, nostr.Tag{"role", "admin"}), "invalid:")
	out = h.ok(owner.Event(t, kinds.RelayChangeRole, "", nostr.Tag{"p", alice.Pub}, nostr.Tag{"role", "admin"}))
	if got := delivered(out.Committed); !slices.Equal(got, []int{kinds.RelayMembershipList}) {
		t.Fatalf("9032 committed kinds %v, want the 13534 alone", got)
	}
	if got := h.list(); !slices.Contains(got, alice.Pub+":admin") {
		t.Fatalf("13534 after 9032: %v", got)
	}

	// 9031: an admin removes members only; nobody removes an owner.
	h.refused(admin.Event(t, kinds.RelayRemoveMember, "", nostr.Tag{"p", alice.Pub}), "restricted:")
	h.refused(admin.Event(t, kinds.RelayRemoveMember, "", nostr.Tag{"p", owner.Pub}), "restricted:")
	h.refused(owner.Event(t, kinds.RelayRemoveMember, "", nostr.Tag{"p", bob.Pub}), "invalid:")
	out = h.ok(owner.Event(t, kinds.RelayRemoveMember, "", nostr.Tag{"p", alice.Pub}))
	if got := delivered(out.Committed); !slices.Equal(got, []int{kinds.RelayMemberRemoved, kinds.RelayMembershipList}) {
		t.Fatalf("9031 committed kinds %v, want 8001 then 13534", got)
	}
	if got := h.list(); slices.Contains(got, alice.Pub+":admin") || len(got) != 2 {
		t.Fatalf("13534 after 9031: %v", got)
	}

	// 28936: only where membership is enforced, NIP-70 protected; an owner
	// cannot leave, a key without a row is no member.
	leave := func(k testkit.Key, tags ...nostr.Tag) *nostr.Event {
		return k.Event(t, kinds.RelayLeaveRequest, "", tags...)
	}
	h.refused(leave(admin, nostr.Tag{"-"}), "invalid: relay membership is not enabled")
	if err := h.st.CommunitiesSetMembershipEnforced(ctx, community, true); err != nil {
		t.Fatal(err)
	}
	h.refused(leave(admin), "invalid:")
	h.refused(leave(owner, nostr.Tag{"-"}), "invalid: relay owner cannot leave")
	h.refused(leave(bob, nostr.Tag{"-"}), "invalid: you are not a relay member")
	out = h.ok(leave(admin, nostr.Tag{"-"}))
	if got := delivered(out.Committed); !slices.Equal(got, []int{kinds.RelayMemberRemoved, kinds.RelayMembershipList}) {
		t.Fatalf("28936 committed kinds %v, want 8001 then 13534", got)
	}
	if n := len(h.relayEvents(kinds.RelayLeaveRequest)); n != 0 {
		t.Fatalf("the 28936 was stored (%d)", n)
	}
	if got := h.relayRows(); len(got) != 0 {
		t.Fatalf("rows after leaving: %v", got)
	}
	if got := h.list(); !slices.Equal(got, []string{owner.Pub + ":owner"}) {
		t.Fatalf("13534 after 28936: %v", got)
	}
	if n := len(h.relayEvents(kinds.RelayMemberRemoved)); n != 2 {
		t.Fatalf("%d 8001 deltas, want 2", n)
	}
}

// TestRelayCommandShape: stale commands and a command without a valid p
// change nothing.
func TestRelayCommandShape(t *testing.T) {
	h := newHarness(t)
	owner, bob := testkit.NewKey(t), testkit.NewKey(t)
	if err := h.st.OperatorsInsert(context.Background(), community, owner.Pub); err != nil {
		t.Fatal(err)
	}
	h.refused(owner.EventAt(t, time.Now().Add(-3*time.Minute), kinds.RelayAddMember, "", nostr.Tag{"p", bob.Pub}), "invalid:")
	h.refused(owner.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", "npub1"}), "invalid:")
	h.refused(owner.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", bob.Pub}, nostr.Tag{"role", "boss"}), "invalid:")
	h.ok(owner.Event(t, kinds.RelayAddMember, "", nostr.Tag{"p", strings.ToUpper(bob.Pub)}))
	if got := h.relayRows(); !slices.Equal(got, []string{bob.Pub + ":member"}) {
		t.Fatalf("rows %v", got)
	}
}

// TestSetWorkspaceProfile: 9033 from an owner or admin sets the icon and
// the row mode; anyone else is refused; a bad icon changes nothing.
func TestSetWorkspaceProfile(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	owner, alice := testkit.NewKey(t), testkit.NewKey(t)
	if err := h.st.OperatorsInsert(ctx, community, owner.Pub); err != nil {
		t.Fatal(err)
	}
	read := func() (string, bool) {
		var pic string
		var on bool
		if err := h.db.QueryRow(ctx, `SELECT picture, thread_replies_in_channel FROM communities WHERE id = $1`, community).Scan(&pic, &on); err != nil {
			t.Fatal(err)
		}
		return pic, on
	}
	h.refused(alice.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"icon", "https://example.com/i.png"}), "restricted:")
	h.refused(owner.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"icon", "javascript:alert(1)"}), "invalid:")
	h.refused(owner.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"thread_replies_in_channel", "maybe"}), "invalid:")
	h.ok(owner.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"icon", "https://example.com/i.png"}, nostr.Tag{"thread_replies_in_channel", "true"}))
	if pic, on := read(); pic != "https://example.com/i.png" || !on {
		t.Fatalf("after 9033: picture %q, row mode %v", pic, on)
	}
	h.ok(owner.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"thread_replies_in_channel", "off"}))
	if pic, on := read(); pic != "https://example.com/i.png" || on {
		t.Fatalf("a row-mode 9033 changed the icon or kept the mode: %q %v", pic, on)
	}
	h.ok(owner.Event(t, kinds.RelaySetProfile, ""))
	if pic, _ := read(); pic != "" {
		t.Fatalf("an empty 9033 kept the icon %q", pic)
	}
}

// refreshes records the directory refreshes asked of it, failing them
// when fail is set.
type refreshes struct {
	ids  []string
	fail bool
}

func (r *refreshes) Refresh(_ context.Context, id string) error {
	r.ids = append(r.ids, id)
	if r.fail {
		return errors.New("the object store is away")
	}
	return nil
}

// TestSetWorkspaceProfileRefreshesDirectory: a 9033 that changes the icon
// (NIP-11's) has the community's directory documents rewritten after its
// commit; one that sets only the row mode, or is refused, asks nothing. A
// failed rewrite keeps the change and says so in the OK's message.
func TestSetWorkspaceProfileRefreshesDirectory(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	owner, alice := testkit.NewKey(t), testkit.NewKey(t)
	if err := h.st.OperatorsInsert(ctx, community, owner.Pub); err != nil {
		t.Fatal(err)
	}
	dir := &refreshes{}
	h.svc = h.svc.WithDirectory(dir)
	h.refused(alice.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"icon", "https://example.com/i.png"}), "restricted:")
	h.ok(owner.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"thread_replies_in_channel", "true"}))
	if len(dir.ids) != 0 {
		t.Fatalf("refreshes after a refusal and a row-mode 9033: %v", dir.ids)
	}
	h.ok(owner.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"icon", "https://example.com/i.png"}))
	if len(dir.ids) != 1 || dir.ids[0] != community {
		t.Fatalf("refreshes after an icon 9033: %v", dir.ids)
	}
	dir.fail = true
	out := h.submit(owner.Event(t, kinds.RelaySetProfile, "", nostr.Tag{"icon", "https://example.com/j.png"}))
	if !out.Accepted || !strings.Contains(out.Message, "NIP-11") {
		t.Fatalf("9033 whose refresh failed: %+v", out)
	}
	var pic string
	if err := h.db.QueryRow(ctx, `SELECT picture FROM communities WHERE id = $1`, community).Scan(&pic); err != nil || pic != "https://example.com/j.png" {
		t.Fatalf("picture after a failed refresh: %q %v", pic, err)
	}
}
