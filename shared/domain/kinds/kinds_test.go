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
	accepted:      []int{0, 1, 3, 5, 7, 9, 10, 11, 12, 9000, 9001, 9002, 9005, 9007, 9008, 9021, 9022, 10009, 30023, 1059, 40003, 1111, 10002, 10050, 9009, 1063},
	relayOnly:     []int{39000, 39001, 39002, 39003, 39005, 39006, 44100, 44101}, // and 22242, refused as AUTH
	searchable:    []int{1, 9, 10, 11, 12, 30023, 40003, 1111, 1063},
	needsChannel:  []int{9, 10, 11, 12, 1063},
	replaceable:   []int{0, 3, 10002, 10009, 10050},
	recipientOnly: []int{44100, 44101, 1059},
	aux:           []int{5, 7, 9005, 40003},
	auxDelete:     []int{5, 9005},
	notRow:        []int{5, 7, 9005, 40003, 39000, 39001, 39002, 39003, 39005, 39006, 44100, 44101},
}

func TestTableMatchesTodaysRules(t *testing.T) {
	for k := 0; k <= Max; k++ {
		ephemeral := k >= 20000 && k < 30000 && k != 22242
		lists51 := k >= 10000 && k <= 10030
		sets51 := k >= 30000 && k <= 30030
		checks := []struct {
			name      string
			got, want bool
		}{
			{"Accepted", Accepted(k), slices.Contains(before.accepted, k) || ephemeral || lists51 || sets51},
			{"RelayOnly", RelayOnly(k), slices.Contains(before.relayOnly, k)},
			{"Ephemeral", Ephemeral(k), ephemeral},
			{"Searchable", Searchable(k), slices.Contains(before.searchable, k)},
			{"InChannel", InChannel(k), slices.Contains(before.needsChannel, k)},
			{"Replaceable", Replaceable(k), slices.Contains(before.replaceable, k) || lists51},
			{"RecipientOnly", RecipientOnly(k), slices.Contains(before.recipientOnly, k)},
			{"AnyAuthor", AnyAuthor(k), k == 1059},
			{"Deletes", Deletes(k), k == 5 || k == 9005},
			{"Aux", Aux(k), slices.Contains(before.aux, k)},
			{"ChannelState", ChannelState(k), k >= 39000 && k <= 39003},
			{"Overlay", Overlay(k), k == 39005 || k == 39006},
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
		{"AuxKinds", AuxKinds(), before.aux},
		{"DeletionKinds", DeletionKinds(), before.auxDelete},
		{"NotRowKinds", NotRowKinds(), before.notRow},
		{"ReplaceableKinds", ReplaceableKinds(), before.replaceable},
		{"RecipientOnlyKinds", RecipientOnlyKinds(), []int{1059, 44100, 44101}},
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
func TestMigrationsSpellNotRowKinds(t *testing.T) {
	var parts []string
	for _, k := range NotRowKinds() {
		parts = append(parts, strconv.Itoa(k))
	}
	want := "kind <> ALL ('{" + strings.Join(parts, ",") + "}'::integer[])"
	for _, f := range []string{"002_query.sql", "004_window_depth.sql"} {
		b, err := os.ReadFile("../../../migrations/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("migrations/%s has no %s", f, want)
		}
	}
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
		{39004, false, StoreNever}, {39009, false, StoreNever}, {39010, true, StoreAddressable},
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
