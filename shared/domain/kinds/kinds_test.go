package kinds

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The rules as the code spelled them before this table existed
// (eventcheck, ingest, query, fanout, store at 1a5d2cc). Every kind in
// 0..Max must get the same answer from the table. Kinds added since are
// appended to the lists (1063, NIP-94 file metadata, with issue 30).
var before = struct {
	accepted, relayOnly, searchable, needsChannel, replaceable, recipientOnly []int
	aux, auxDelete, notRow                                                    []int
}{
	// Issue 30 adds 1063 (NIP-94 file metadata, in a channel). Issue 28 adds 1111, 10002, 10050 and NIP-51's ranges (lists51, sets51).
	// Issue 40 adds 9010 (NIP-29 pin events, a row of its own).
	accepted:      []int{0, 1, 3, 5, 7, 9, 10, 11, 12, 9000, 9001, 9002, 9005, 9007, 9008, 9021, 9022, 10009, 30023, 1059, 40003, 1111, 10002, 10050, 9009, 1063, 9010},
	relayOnly:     []int{39000, 39001, 39002, 39003, 39005, 39006, 44100, 44101}, // and 22242, refused as AUTH
	searchable:    []int{1, 9, 10, 11, 12, 30023, 40003, 1111, 1063},
	needsChannel:  []int{9, 10, 11, 12, 1063},
	replaceable:   []int{0, 3, 10002, 10009, 10050},
	recipientOnly: []int{44100, 44101, 1059},
	aux:           []int{5, 7, 9005, 40003},
	auxDelete:     []int{5, 9005},
	notRow:        []int{5, 7, 9005, 40003, 39000, 39001, 39002, 39003, 39005, 39006, 44100, 44101},
}

// What issue 29 (Buzz's kinds and their read models) added to before.
var buzz = struct {
	accepted, relayOnly, searchable, needsChannel, replaceable, recipientOnly []int
	aux, authorOnly, sharedGated                                              []int
}{
	accepted: []int{10100, 30078, 30174, 30176, 30177, 30315, 30620, 30179, 30300, 30350, 30175, 30178, 44200,
		40002, 40004, 40005, 40006, 40007, 40008, 40100, 43001, 43002, 43003, 43004, 43005, 43006, 45001, 45002, 45003,
		1984, 9040, 9041, 9042, 9043, 9044, 41010, 41011, 41012, 42000},
	relayOnly:     []int{30622, 39007},
	searchable:    []int{40002, 40006, 40008, 40100, 45001, 45003},
	needsChannel:  []int{40002, 40004, 40005, 40006, 40007, 40008, 40100, 43001, 43002, 43003, 43004, 43005, 43006, 45001, 45003},
	replaceable:   []int{10100},
	recipientOnly: []int{24200, 44200, 30622},
	aux:           []int{45002},
	authorOnly:    []int{30179, 30300, 30350},
	sharedGated:   []int{30175, 30178},
}

// What issue 40 (the rest of the protocol) added: NIP-62's request to
// vanish, accepted and acted on; NIP-29 LiveKit's 39004 participants,
// which only the relay signs.
var protocol40 = struct{ accepted, relayOnly []int }{accepted: []int{62}, relayOnly: []int{39004}} // 39004: NIP-29 LiveKit participants

// What NIP-43 relay membership (issue 29) added: commands acted on, the
// leave request (in the ephemeral range, but never delivered), and the
// relay-signed list and deltas.
var nip43 = struct {
	accepted, relayOnly, replaceable []int
	leave, join, invite              int
}{
	accepted:    []int{9030, 9031, 9032, 9033, 28934, 28936},
	relayOnly:   []int{8000, 8001, 13534, 28935},
	replaceable: []int{13534},
	leave:       28936,
	join:        28934,
	invite:      28935,
}

// What issues 51 and 52 added: the kinds Buzz's relay makes (its 40099
// timeline rows, the 41001 it declares, NIP-IA's 8002, 8003 and 13535),
// refused from every client; 40099 is a channel's row (in channel).
var relayMade = struct{ relayOnly, needsChannel, replaceable []int }{
	relayOnly:    []int{40099, 41001, 8002, 8003, 13535},
	needsChannel: []int{40099},
	replaceable:  []int{13535},
}

// What push notifications (issue 39) added: NIP-9a's subscription, an
// author-only addressable kind like NIP-PL's lease.
var push = struct{ accepted, authorOnly []int }{accepted: []int{30390}, authorOnly: []int{30390}}

// What workflows (issue 53) added: the manual trigger and the approval
// decisions, accepted and acted on; the approval request, relay-signed.
var workflows = struct{ accepted, relayOnly []int }{accepted: []int{46020, 46030, 46031}, relayOnly: []int{46010}}

func TestTableMatchesTodaysRules(t *testing.T) {
	in := func(k int, lists ...[]int) bool {
		for _, l := range lists {
			if slices.Contains(l, k) {
				return true
			}
		}
		return false
	}
	for k := 0; k <= Max; k++ {
		ephemeral := k >= 20000 && k < 30000 && k != 22242 && k != nip43.leave && k != nip43.join && k != nip43.invite
		lists51 := k >= 10000 && k <= 10030
		sets51 := k >= 30000 && k <= 30030
		checks := []struct {
			name      string
			got, want bool
		}{
			{"Accepted", Accepted(k), in(k, before.accepted, buzz.accepted, nip43.accepted, protocol40.accepted, push.accepted, workflows.accepted) || ephemeral || lists51 || sets51},
			{"RelayOnly", RelayOnly(k), in(k, before.relayOnly, buzz.relayOnly, nip43.relayOnly, protocol40.relayOnly, relayMade.relayOnly, workflows.relayOnly)},
			{"Ephemeral", Ephemeral(k), ephemeral},
			{"Searchable", Searchable(k), in(k, before.searchable, buzz.searchable)},
			{"InChannel", InChannel(k), in(k, before.needsChannel, buzz.needsChannel, relayMade.needsChannel)},
			{"Replaceable", replaceable(k), in(k, before.replaceable, buzz.replaceable, nip43.replaceable, relayMade.replaceable) || lists51},
			{"RecipientOnly", RecipientOnly(k), in(k, before.recipientOnly, buzz.recipientOnly)},
			{"AuthorOnly", AuthorOnly(k), in(k, buzz.authorOnly, push.authorOnly)},
			{"SharedGated", SharedGated(k), in(k, buzz.sharedGated)},
			{"AnyAuthor", AnyAuthor(k), k == 1059},
			{"Deletes", Deletes(k), k == 5 || k == 9005},
			{"Aux", Aux(k), in(k, before.aux, buzz.aux)},
			{"ChannelState", ChannelState(k), k >= 39000 && k <= 39003},
			{"Overlay", Overlay(k), k == 39005 || k == 39006 || k == 39007},
			{"Moderation", Moderation(k), k >= 9000 && k <= 9030},
			{"InAddressableRange", InAddressableRange(k), k >= 30000 && k <= 39999},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s(%d) = %v, want %v", c.name, k, c.got, c.want)
			}
		}
	}
	lists := []struct {
		name      string
		got, want []int
	}{
		{"AuxKinds", AuxKinds(), []int{5, 7, 9005, 40003, 45002}},
		{"DeletionKinds", DeletionKinds(), before.auxDelete},
		{"NotRowKinds", NotRowKinds(), []int{5, 7, 9005, 40003, 45002, 39000, 39001, 39002, 39003, 39005, 39006, 39007, 44100, 44101}},
		{"ReplaceableKinds", ReplaceableKinds(), []int{0, 3, 10002, 10009, 10050, 10100, 13534, 13535}},
		{"RecipientOnlyKinds", RecipientOnlyKinds(), []int{1059, 24200, 30622, 44100, 44101, 44200}},
		{"AuthorOnlyKinds", AuthorOnlyKinds(), append(slices.Clone(buzz.authorOnly), push.authorOnly...)},
		{"SharedGatedKinds", SharedGatedKinds(), buzz.sharedGated},
	}
	for _, l := range lists {
		if !slices.Equal(l.got, l.want) {
			t.Errorf("%s() = %v, want %v", l.name, l.got, l.want)
		}
	}
}

// Rows must be consistent with each other: a kind is sent by a client or
// signed by the relay, never both; what is never stored is not replaced;
// every stored addressable kind is in NIP-01's addressable range.
func TestTableIsConsistent(t *testing.T) {
	seen := map[int]bool{}
	for _, k := range table {
		if k.Name == "" || k.Storage == "" || k.First > k.Last {
			t.Errorf("row %d-%d: needs a name, a storage and First <= Last", k.First, k.Last)
		}
		if k.First == k.Last {
			if seen[k.First] {
				t.Errorf("kind %d has two rows", k.First)
			}
			seen[k.First] = true
		}
		if k.Accepted && k.RelayOnly {
			t.Errorf("kind %d: both accepted and relay-only", k.First)
		}
		if k.GroupDefault {
			continue
		}
		if (k.Storage == StoreAddressable) != (k.Storage != StoreNever && InAddressableRange(k.First)) {
			t.Errorf("kind %d: storage %s does not fit NIP-01's ranges", k.First, k.Storage)
		}
		if (k.Overlay || k.Ephemeral) && k.Storage != StoreNever {
			t.Errorf("kind %d: overlays and ephemeral kinds are never stored", k.First)
		}
		if k.Deletes && !k.Aux {
			t.Errorf("kind %d: a deletion kind is in the aux closure", k.First)
		}
	}
	if _, ok := Lookup(HTTPAuth); !ok || !Ephemeral(HTTPAuth) {
		t.Errorf("NIP-98's %d is in the ephemeral range", HTTPAuth)
	}
	if _, ok := Lookup(2); ok {
		t.Error("kind 2 has no meaning here")
	}
}

// The events_window partial index spells the not-row list in SQL; the
// window read's predicate must be the same text for the planner to use it.
// The index's newest definition is the one in force.
func TestMigrationsSpellNotRowKinds(t *testing.T) {
	var parts []string
	for _, k := range NotRowKinds() {
		parts = append(parts, strconv.Itoa(k))
	}
	want := "kind <> ALL ('{" + strings.Join(parts, ",") + "}'::integer[])"
	f, text := newestDefinition(t, "CREATE INDEX events_window")
	if !strings.Contains(text, want) {
		t.Errorf("migrations/%s has no %s", f, want)
	}
}

// newestDefinition returns the last migration (in file-name order) whose
// text holds marker, and its text.
func newestDefinition(t *testing.T, marker string) (string, string) {
	t.Helper()
	entries, err := os.ReadDir("../../../migrations")
	if err != nil {
		t.Fatal(err)
	}
	var name, text string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := os.ReadFile("../../../migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), marker) {
			name, text = e.Name(), string(b)
		}
	}
	if name == "" {
		t.Fatalf("no migration holds %q", marker)
	}
	return name, text
}

// Any kind a client may send goes to a group (issue 28), except NIP-29's
// relay-generated range and the relay's own kinds; its storage is NIP-01's.
func TestInGroup(t *testing.T) {
	for _, c := range []struct {
		kind    int
		ok      bool
		storage Storage
	}{
		{2, true, StoreRegular}, {1111, true, StoreRegular}, {31922, true, StoreAddressable},
		{10123, true, StoreReplaceable}, {9, true, StoreRegular}, {39000, true, StoreAddressable},
		{39004, true, StoreAddressable}, {39009, false, StoreNever}, {39010, true, StoreAddressable},
	} {
		_, ok := InGroup(c.kind)
		if ok != c.ok || StorageOf(c.kind, true) != c.storage {
			t.Errorf("kind %d: InGroup %v storage %s, want %v %s", c.kind, ok, StorageOf(c.kind, true), c.ok, c.storage)
		}
	}
	if StorageOf(2, false) != StoreNever || Personal(9) || !Personal(10000) || !Personal(30003) || Personal(30023) {
		t.Error("outside a group an unknown kind is not stored; NIP-51's ranges are personal, 30023 is not")
	}
}

// replaceable reports whether the relay keeps only the newest event of kind
// per author (0, 3, 10002, 10009, 10050, NIP-51 lists).
func replaceable(kind int) bool {
	return is(kind, func(k Kind) bool { return k.Storage == StoreReplaceable })
}
