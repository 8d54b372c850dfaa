package nip29_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/nip29"
)

func TestParseCreate(t *testing.T) {
	id := "9b353519-f4fe-4757-aef4-bec6cc0ae54c"
	ev := func(ts ...[]string) *nostr.Event { return &nostr.Event{Kind: 9007, Tags: tags(ts...)} }
	cases := []struct {
		name     string
		ev       *nostr.Event
		typ, vis string
		err      string
	}{
		{"defaults", ev([]string{"h", id}, []string{"name", "n"}), "stream", "open", ""},
		{"private forum", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "forum"}, []string{"visibility", "private"}), "forum", "private", ""},
		{"system is private", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "system"}), "system", "private", ""},
		{"system open on request", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "system"}, []string{"visibility", "open"}), "system", "open", ""},
		{"no h", ev([]string{"name", "n"}), "", "", "invalid: channel create needs an h tag"},
		// Issue 28: any NIP-29 id (was: UUIDs only), bounded and from a-z A-Z 0-9 - _.
		{"h with a dot", ev([]string{"h", "gen.eral"}, []string{"name", "n"}), "", "", "invalid: group id"},
		{"forbidden character", ev([]string{"h", "a b"}), "", "", "invalid: group id"},
		{"too long", ev([]string{"h", strings.Repeat("x", 65)}), "", "", "invalid: group id"},
		{"empty h", ev([]string{"h", ""}), "", "", "invalid: channel create needs an h tag"},
		{"flag with a value", ev([]string{"h", id}, []string{"private", "yes"}), "", "", "invalid: the private flag takes no value"},
		{"bad supported kind", ev([]string{"h", id}, []string{"supported_kinds", "9", "x"}), "", "", "invalid: supported_kinds"},
		{"uppercase uuid is stored lowercase", ev([]string{"h", strings.ToUpper(id)}, []string{"name", "n"}), "stream", "open", ""},
		{"valueless t", ev([]string{"h", id}, []string{"name", "n"}, []string{"t"}), "", "", "invalid: a t tag needs a value"},
		// Issue 28: NIP-29's 9007 needs only h (name was required).
		{"no name", ev([]string{"h", id}), "stream", "open", ""},
		{"NIP-29 flags set visibility", ev([]string{"h", id}, []string{"private"}, []string{"closed"}), "stream", "private", ""},
		{"blank name", ev([]string{"h", id}, []string{"name", "  "}), "", "", "invalid: a name tag cannot be blank"},
		{"unknown type", ev([]string{"h", id}, []string{"name", "n"}, []string{"channel_type", "voice"}), "", "", "invalid: channel_type"},
		{"unknown visibility", ev([]string{"h", id}, []string{"name", "n"}, []string{"visibility", "secret"}), "", "", "invalid: visibility"},
		{"bad label", ev([]string{"h", id}, []string{"name", "n"}, []string{"t", "dm"}), "", "", "invalid: label"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := nip29.ParseCreate(c.ev)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("want %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != c.typ || got.Visibility != c.vis || got.ID != id {
				t.Fatalf("got %s/%s, want %s/%s", got.Type, got.Visibility, c.typ, c.vis)
			}
		})
	}
}

func TestGroupIDs(t *testing.T) {
	for _, c := range []struct {
		in, canonical string
		ok            bool
	}{
		{"9B353519-F4FE-4757-AEF4-BEC6CC0AE54C", "9b353519-f4fe-4757-aef4-bec6cc0ae54c", true},
		{"AbC_12-x", "AbC_12-x", true},
		{strings.Repeat("z", 64), strings.Repeat("z", 64), true},
		{strings.Repeat("z", 65), "", false},
		{"", "", false},
		{"a:b", "", false},
		{"caf\u00e9", "", false},
	} {
		if got := groupid.Valid(c.in); got != c.ok {
			t.Errorf("groupid.Valid(%q) = %v, want %v", c.in, got, c.ok)
		}
		if c.ok && groupid.Canonical(c.in) != c.canonical {
			t.Errorf("groupid.Canonical(%q) = %q, want %q", c.in, groupid.Canonical(c.in), c.canonical)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		name    string
		tags    nostr.Tags
		want    nip29.Flags
		present bool
		err     string
	}{
		{"none", tags([]string{"name", "n"}), nip29.Flags{}, false, ""},
		{"each", tags([]string{"private"}, []string{"restricted"}, []string{"hidden"}, []string{"closed"}), nip29.Flags{Private: true, Restricted: true, Hidden: true, Closed: true}, true, ""},
		{"negations only", tags([]string{"public"}, []string{"open"}), nip29.Flags{}, true, ""},
		{"value", tags([]string{"hidden", "1"}), nip29.Flags{}, false, "invalid: the hidden flag takes no value"},
		{"an echoed public beside private", tags([]string{"public"}, []string{"private"}, []string{"open"}), nip29.Flags{Private: true}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, present, err := nip29.ParseFlags(c.tags)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want || present != c.present {
				t.Fatalf("got %+v %v %v, want %+v %v", got, present, err, c.want, c.present)
			}
		})
	}
	// Issue 36: Buzz's private is hidden too (was private, restricted and
	// closed, hidden only for a system channel).
	if f := nip29.VisibilityFlags("private"); f != (nip29.Flags{Private: true, Restricted: true, Closed: true, Hidden: true}) {
		t.Fatalf("Buzz private = %+v", f)
	}
	if f := nip29.VisibilityFlags("open"); f != (nip29.Flags{}) {
		t.Fatalf("Buzz open = %+v", f)
	}
}

// A Buzz client's private channel is hidden whatever its type (Buzz scopes
// a private channel's metadata to its members); a group created with
// NIP-29's own flags keeps exactly the flags it names: private without
// hidden stays visible (issue 36).
func TestBuzzPrivateChannelIsHidden(t *testing.T) {
	id := "6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f"
	for _, c := range []struct {
		name string
		tags [][]string
		want nip29.Flags
	}{
		{"Buzz private stream", [][]string{{"visibility", "private"}}, nip29.Flags{Private: true, Restricted: true, Closed: true, Hidden: true}},
		{"Buzz private forum", [][]string{{"channel_type", "forum"}, {"visibility", "private"}}, nip29.Flags{Private: true, Restricted: true, Closed: true, Hidden: true}},
		{"Buzz system (private by default)", [][]string{{"channel_type", "system"}}, nip29.Flags{Private: true, Restricted: true, Closed: true, Hidden: true}},
		{"Buzz open", [][]string{{"visibility", "open"}}, nip29.Flags{}},
		{"NIP-29 private only", [][]string{{"private"}}, nip29.Flags{Private: true}},
		{"NIP-29 private, restricted, closed", [][]string{{"private"}, {"restricted"}, {"closed"}}, nip29.Flags{Private: true, Restricted: true, Closed: true}},
		{"NIP-29 flags beside Buzz's visibility", [][]string{{"visibility", "private"}, {"private"}}, nip29.Flags{Private: true}},
	} {
		all := append([][]string{{"h", id}}, c.tags...)
		got, err := nip29.ParseCreate(&nostr.Event{Kind: 9007, Tags: tags(all...)})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Flags != c.want {
			t.Errorf("%s: flags %+v, want %+v", c.name, got.Flags, c.want)
		}
	}
}
