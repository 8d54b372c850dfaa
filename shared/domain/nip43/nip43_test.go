package nip43

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

const now = 1_800_000_000

var key = strings.Repeat("ab", 32)

// prefix is the NIP-01 prefix of err, "" for nil.
func prefix(err error) string {
	if err == nil {
		return ""
	}
	if r, ok := reject.As(err); ok {
		return string(r.Prefix)
	}
	return "not a rejection"
}

func TestAdmits(t *testing.T) {
	for _, c := range []struct {
		enforced bool
		role     string
		want     bool
	}{
		{false, "", true}, {false, Member, true},
		{true, "", false}, {true, Member, true}, {true, Admin, true}, {true, Owner, true},
	} {
		if got := Admits(c.enforced, c.role); got != c.want {
			t.Errorf("Admits(%v, %q) = %v, want %v", c.enforced, c.role, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	upper := strings.ToUpper(key)
	for _, c := range []struct {
		name   string
		kind   int
		at     int64
		tags   nostr.Tags
		target string
		role   string
		prefix string
	}{
		{"add, default role", kinds.RelayAddMember, now, nostr.Tags{{"p", key}}, key, Member, ""},
		{"add admin", kinds.RelayAddMember, now, nostr.Tags{{"p", key}, {"role", "admin"}}, key, Admin, ""},
		{"first valid p wins, upper case lowered", kinds.RelayAddMember, now, nostr.Tags{{"p", "abcd"}, {"p", upper}, {"p", strings.Repeat("cd", 32)}}, key, Member, ""},
		{"no p", kinds.RelayAddMember, now, nostr.Tags{{"role", "member"}}, "", "", "invalid"},
		{"p not hex", kinds.RelayRemoveMember, now, nostr.Tags{{"p", strings.Repeat("g", 64)}}, "", "", "invalid"},
		{"remove has no role", kinds.RelayRemoveMember, now, nostr.Tags{{"p", key}, {"role", "admin"}}, key, "", ""},
		{"change needs a role", kinds.RelayChangeRole, now, nostr.Tags{{"p", key}}, key, "", "invalid"},
		{"change", kinds.RelayChangeRole, now, nostr.Tags{{"p", key}, {"role", "admin"}}, key, Admin, ""},
		{"120 s old is fresh", kinds.RelayAddMember, now - 120, nostr.Tags{{"p", key}}, key, Member, ""},
		{"121 s old is stale", kinds.RelayAddMember, now - 121, nostr.Tags{{"p", key}}, "", "", "invalid"},
		{"121 s ahead is stale", kinds.RelayAddMember, now + 121, nostr.Tags{{"p", key}}, "", "", "invalid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(&nostr.Event{Kind: c.kind, CreatedAt: nostr.Timestamp(c.at), Tags: c.tags}, now)
			if prefix(err) != c.prefix {
				t.Fatalf("err = %v, want prefix %q", err, c.prefix)
			}
			if err == nil && (got.Target != c.target || got.Role != c.role) {
				t.Errorf("got target %q role %q, want %q %q", got.Target, got.Role, c.target, c.role)
			}
		})
	}
}

// TestDecide is the permission matrix (Buzz's relay_admin.rs): kind ×
// sender role × target role × role asked.
func TestDecide(t *testing.T) {
	add, remove, change := kinds.RelayAddMember, kinds.RelayRemoveMember, kinds.RelayChangeRole
	for _, c := range []struct {
		kind                 int
		role, sender, target string
		self                 bool
		prefix               string
	}{
		{add, Member, Owner, "", false, ""},
		{add, Member, Admin, "", false, ""},
		{add, Member, Member, "", false, "restricted"},
		{add, Member, "", "", false, "restricted"},
		{add, Admin, Owner, "", false, ""},
		{add, Admin, Admin, "", false, "restricted"},
		{add, Owner, Owner, "", false, "invalid"},
		{add, "moderator", Owner, "", false, "invalid"},
		{add, Member, Owner, Member, false, ""}, // a re-add changes nothing
		{remove, "", Owner, Member, false, ""},
		{remove, "", Owner, Admin, false, ""},
		{remove, "", Admin, Member, false, ""},
		{remove, "", Admin, Admin, false, "restricted"},
		{remove, "", Admin, Owner, false, "restricted"},
		{remove, "", Owner, Owner, false, "restricted"},
		{remove, "", Owner, "", false, "invalid"},
		{remove, "", Admin, Admin, true, "invalid"},
		{remove, "", Member, Member, false, "restricted"},
		{change, Admin, Owner, Member, false, ""},
		{change, Member, Owner, Admin, false, ""},
		{change, Admin, Admin, Member, false, "restricted"},
		{change, Admin, Member, Member, false, "restricted"},
		{change, Owner, Owner, Member, false, "invalid"},
		{change, "boss", Owner, Member, false, "invalid"},
		{change, Admin, Owner, Owner, false, "restricted"},
		{change, Admin, Owner, "", false, "invalid"},
		{change, Member, Owner, Owner, true, "invalid"},
		{kinds.RelaySetProfile, "", Owner, "", false, "invalid"},
	} {
		err := Decide(Command{Kind: c.kind, Target: key, Role: c.role}, c.sender, c.target, c.self)
		if prefix(err) != c.prefix {
			t.Errorf("kind %d role %q by %q on %q (self %v): %v, want prefix %q", c.kind, c.role, c.sender, c.target, c.self, err, c.prefix)
		}
	}
}

func TestLeave(t *testing.T) {
	protected := nostr.Tags{{"-"}}
	for _, c := range []struct {
		name     string
		enforced bool
		at       int64
		tags     nostr.Tags
		role     string
		want     string // the refusal's text, "" accepted
	}{
		{"member leaves", true, now, protected, Member, ""},
		{"admin leaves", true, now, protected, Admin, ""},
		{"owner cannot", true, now, protected, Owner, "invalid: relay owner cannot leave"},
		{"no member", true, now, protected, "", "invalid: you are not a relay member"},
		{"not enforced", false, now, protected, Member, "invalid: relay membership is not enabled in this community"},
		{"unprotected", true, now, nil, Member, "invalid: a leave request must carry the NIP-70 tag [\"-\"]"},
		{"stale", true, now - 121, protected, Member, "invalid: created_at is -121 s from the relay's clock (at most 120 s either way)"},
	} {
		err := CheckLeave(&nostr.Event{Kind: kinds.RelayLeaveRequest, CreatedAt: nostr.Timestamp(c.at), Tags: c.tags}, c.enforced, now)
		if err == nil {
			err = Leave(c.role)
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckIcon(t *testing.T) {
	for _, c := range []struct {
		icon string
		ok   bool
	}{
		{"", true}, {"https://example.com/icon.png", true}, {"http://example.com/i.png", true},
		{"data:image/webp;base64,UklGRg==", true},
		{"javascript:alert(1)", false}, {"data:text/html;base64,PGI+", false},
		{"https://example.com/a b.png", false}, {"https://example.com/a\nb.png", false},
		{"https://example.com/" + strings.Repeat("a", MaxIconURL) + ".png", false},
		{"data:image/png;base64," + strings.Repeat("A", MaxIconDataURL), false},
	} {
		if err := CheckIcon(c.icon); (err == nil) != c.ok {
			t.Errorf("CheckIcon(%.40q) = %v, want ok %v", c.icon, err, c.ok)
		}
	}
}

func TestParseSwitch(t *testing.T) {
	for _, v := range []string{"true", "1", "yes", "on", "TRUE"} {
		if on, err := ParseSwitch(v); err != nil || !on {
			t.Errorf("ParseSwitch(%q) = %v, %v", v, on, err)
		}
	}
	for _, v := range []string{"false", "0", "no", "off", "FALSE"} {
		if on, err := ParseSwitch(v); err != nil || on {
			t.Errorf("ParseSwitch(%q) = %v, %v", v, on, err)
		}
	}
	for _, v := range []string{"maybe", ""} {
		if _, err := ParseSwitch(v); prefix(err) != "invalid" {
			t.Errorf("ParseSwitch(%q) = %v, want invalid", v, err)
		}
	}
}

func TestTags(t *testing.T) {
	got := ListTags([]Entry{{"a", Owner}, {"b", Member}})
	want := nostr.Tags{{"-"}, {"member", "a", "owner"}, {"member", "b", "member"}}
	if len(got) != len(want) {
		t.Fatalf("ListTags = %v", got)
	}
	for i := range want {
		if strings.Join(got[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("ListTags[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if d := DeltaTags(key); len(d) != 2 || d[0][0] != "-" || d[1][0] != "p" || d[1][1] != key {
		t.Errorf("DeltaTags = %v", d)
	}
}
