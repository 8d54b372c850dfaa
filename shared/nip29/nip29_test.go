package nip29_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/nip29"
)

func tags(ts ...[]string) nostr.Tags {
	out := nostr.Tags{}
	for _, t := range ts {
		out = append(out, nostr.Tag(t))
	}
	return out
}

func TestLabels(t *testing.T) {
	long := strings.Repeat("a", 64)
	cases := []struct {
		name    string
		tags    nostr.Tags
		want    []string
		present bool
		err     string
	}{
		{"no t tag", tags([]string{"h", "x"}), []string{}, false, ""},
		{"one label", tags([]string{"t", "agent-config"}), []string{"agent-config"}, true, ""},
		{"stored order and repeats once", tags([]string{"t", "b"}, []string{"t", "a"}, []string{"t", "b"}), []string{"b", "a"}, true, ""},
		{"all allowed characters", tags([]string{"t", "a-z.0:9"}), []string{"a-z.0:9"}, true, ""},
		{"64 characters", tags([]string{"t", long}), []string{long}, true, ""},
		{"65 characters", tags([]string{"t", long + "a"}), nil, true, "invalid: label"},
		{"uppercase", tags([]string{"t", "Config"}), nil, true, "invalid: label"},
		{"space", tags([]string{"t", "a b"}), nil, true, "invalid: label"},
		{"underscore", tags([]string{"t", "a_b"}), nil, true, "invalid: label"},
		{"reserved stream", tags([]string{"t", "stream"}), nil, true, "invalid: label \"stream\" is a channel type"},
		{"reserved forum", tags([]string{"t", "forum"}), nil, true, "invalid:"},
		{"reserved dm", tags([]string{"t", "dm"}), nil, true, "invalid:"},
		{"reserved workflow", tags([]string{"t", "workflow"}), nil, true, "invalid:"},
		{"reserved system", tags([]string{"t", "system"}), nil, true, "invalid:"},
		{"clear", tags([]string{"t", ""}), []string{}, true, ""},
		{"valueless t", tags([]string{"t"}), nil, true, "invalid: a t tag needs a value"},
		{"clear twice", tags([]string{"t", ""}, []string{"t", ""}), []string{}, true, ""},
		{"clear mixed with label", tags([]string{"t", ""}, []string{"t", "a"}), nil, true, `invalid: ["t",""] clears`},
		{"eight labels", tags([]string{"t", "1"}, []string{"t", "2"}, []string{"t", "3"}, []string{"t", "4"}, []string{"t", "5"}, []string{"t", "6"}, []string{"t", "7"}, []string{"t", "8"}), []string{"1", "2", "3", "4", "5", "6", "7", "8"}, true, ""},
		{"eight distinct with a repeat", tags([]string{"t", "1"}, []string{"t", "2"}, []string{"t", "3"}, []string{"t", "4"}, []string{"t", "5"}, []string{"t", "6"}, []string{"t", "7"}, []string{"t", "8"}, []string{"t", "1"}), []string{"1", "2", "3", "4", "5", "6", "7", "8"}, true, ""},
		{"nine labels", tags([]string{"t", "1"}, []string{"t", "2"}, []string{"t", "3"}, []string{"t", "4"}, []string{"t", "5"}, []string{"t", "6"}, []string{"t", "7"}, []string{"t", "8"}, []string{"t", "9"}), nil, true, "invalid: 9 distinct labels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, present, err := nip29.Labels(c.tags)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("want error %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if present != c.present || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v present=%v, want %v present=%v", got, present, c.want, c.present)
			}
		})
	}
}

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
		{"h not a uuid", ev([]string{"h", "general"}, []string{"name", "n"}), "", "", "invalid: channel id"},
		{"uppercase uuid is stored lowercase", ev([]string{"h", strings.ToUpper(id)}, []string{"name", "n"}), "stream", "open", ""},
		{"valueless t", ev([]string{"h", id}, []string{"name", "n"}, []string{"t"}), "", "", "invalid: a t tag needs a value"},
		{"no name", ev([]string{"h", id}), "", "", "invalid: channel create needs a non-empty name"},
		{"blank name", ev([]string{"h", id}, []string{"name", "  "}), "", "", "invalid: channel create needs a non-empty name"},
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

func TestParseReply(t *testing.T) {
	p, r := strings.Repeat("1", 64), strings.Repeat("2", 64)
	cases := []struct {
		name string
		tags nostr.Tags
		ok   bool
		want nip29.Reply
	}{
		{"reply marker", tags([]string{"e", p, "", "reply"}), true, nip29.Reply{Parent: p}},
		{"reply and root", tags([]string{"e", r, "", "root"}, []string{"e", p, "", "reply"}), true, nip29.Reply{Parent: p, Root: r}},
		{"root alone is not a reply", tags([]string{"e", r, "", "root"}), false, nip29.Reply{Root: r}},
		{"unmarked e is not a reply", tags([]string{"e", p}), false, nip29.Reply{}},
		{"broadcast", tags([]string{"e", p, "", "reply"}, []string{"broadcast", "1"}), true, nip29.Reply{Parent: p, Broadcast: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := nip29.ParseReply(c.tags)
			if ok != c.ok || got != c.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestStateTagOrder(t *testing.T) {
	ch := &nip29.Channel{ID: "c", Name: "n", Type: "system", Visibility: "private", Labels: []string{"x", "y"}, Creator: "pk", CreatedAt: 17}
	got := nip29.MetadataTags(ch)
	want := tags([]string{"d", "c"}, []string{"t", "system"}, []string{"t", "x"}, []string{"t", "y"}, []string{"P", "pk"}, []string{"created_at", "17"},
		[]string{"name", "n"}, []string{"channel_type", "system"}, []string{"private"}, []string{"closed"}, []string{"hidden"})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("39000 tags\n got %v\nwant %v", got, want)
	}
	members := []nip29.MemberRole{{Pubkey: "a", Role: "owner"}, {Pubkey: "b", Role: "member"}}
	if got := nip29.AdminsTags(ch, members); !reflect.DeepEqual(got[:5], want[:5]) || !reflect.DeepEqual(got[5:], tags([]string{"p", "a", "owner"})) {
		t.Fatalf("39001 tags %v", got)
	}
	if got := nip29.MembersTags(ch, members); !reflect.DeepEqual(got[5:], tags([]string{"p", "a", "", "owner"}, []string{"p", "b", "", "member"})) {
		t.Fatalf("39002 tags %v", got)
	}
}

func FuzzLabels(f *testing.F) {
	f.Add("agent-config", "", "x")
	f.Add("stream", "a:b", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		got, _, err := nip29.Labels(tags([]string{"t", a}, []string{"t", b}, []string{"t", c}))
		if err != nil {
			return
		}
		if len(got) > nip29.MaxLabels {
			t.Fatalf("accepted %d labels", len(got))
		}
		for _, l := range got {
			if !nip29.ValidLabel(l) {
				t.Fatalf("accepted invalid label %q", l)
			}
		}
	})
}

func TestParsePutUser(t *testing.T) {
	pk := strings.Repeat("ab", 32)
	ev := func(ts ...[]string) *nostr.Event { return &nostr.Event{Kind: 9000, Tags: tags(ts...)} }
	for _, c := range []struct {
		name string
		ev   *nostr.Event
		role string
		err  string
	}{
		{"no role keeps or defaults", ev([]string{"h", "c"}, []string{"p", pk}), "", ""},
		{"NIP-29 p role", ev([]string{"p", pk, "admin"}), "admin", ""},
		{"Buzz role tag", ev([]string{"p", pk}, []string{"role", "admin"}), "admin", ""},
		{"role tag before p", ev([]string{"role", "owner"}, []string{"p", pk}), "owner", ""},
		{"both agree", ev([]string{"p", pk, "member"}, []string{"role", "member"}), "member", ""},
		{"both disagree", ev([]string{"p", pk, "member"}, []string{"role", "admin"}), "", "invalid: the p tag's role"},
		{"empty role tag is none", ev([]string{"p", pk}, []string{"role", ""}), "", ""},
		{"unknown role", ev([]string{"p", pk}, []string{"role", "moderator"}), "", "invalid: role \"moderator\""},
		{"unknown p role", ev([]string{"p", pk, "king"}), "", "invalid: role \"king\""},
		{"no p", ev([]string{"role", "admin"}), "", "invalid: put-user needs a p tag"},
		{"bad key", ev([]string{"p", "xyz"}), "", "invalid: p tag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := nip29.ParsePutUser(c.ev)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got.Pubkey != pk || got.Role != c.role {
				t.Fatalf("got %+v, %v; want role %q", got, err, c.role)
			}
		})
	}
}
