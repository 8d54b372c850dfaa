package session_test

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/session"
)

func ts(v int64) *nostr.Timestamp { t := nostr.Timestamp(v); return &t }

// TestResumeCoversOnlyWhatWasAnsweredWithNothingWrittenSince: the one
// rule of a replay answered from the session store, case by case.
func TestResumeCoversOnlyWhatWasAnsweredWithNothingWrittenSince(t *testing.T) {
	const at, wrote int64 = 10_000, 9_000
	base := []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"x"}}, Since: ts(5000), Limit: 50}}
	rec, ok := session.NewResume("c", "pk", "s", base, wrote, at)
	if !ok {
		t.Fatal("no record of a quiet community's answer")
	}
	later := at + session.ResumeSettle
	m := session.Mark{Value: 9_500, Exists: true, Wrote: wrote}
	with := func(f func(*nostr.Filter)) []nostr.Filter {
		fs := []nostr.Filter{base[0].Clone()}
		f(&fs[0])
		return fs
	}
	cases := []struct {
		name      string
		community string
		pubkey    string
		sub       string
		filters   []nostr.Filter
		mark      session.Mark
		now       int64
		want      bool
	}{
		{"the same REQ after the settle", "c", "pk", "s", base, m, later, true},
		{"buzz's replay: a later since", "c", "pk", "s", with(func(f *nostr.Filter) { f.Since = ts(9_990) }), m, later, true},
		{"a smaller limit", "c", "pk", "s", with(func(f *nostr.Filter) { f.Limit = 10 }), m, later, true},
		{"an older since asks for what was not answered", "c", "pk", "s", with(func(f *nostr.Filter) { f.Since = ts(4999) }), m, later, false},
		{"no since where one was answered", "c", "pk", "s", with(func(f *nostr.Filter) { f.Since = nil }), m, later, false},
		{"a larger limit", "c", "pk", "s", with(func(f *nostr.Filter) { f.Limit = 51 }), m, later, false},
		{"no limit where one was answered", "c", "pk", "s", with(func(f *nostr.Filter) { f.Limit = 0 }), m, later, false},
		{"another channel", "c", "pk", "s", with(func(f *nostr.Filter) { f.Tags = nostr.TagMap{"h": {"y"}} }), m, later, false},
		{"another kind", "c", "pk", "s", with(func(f *nostr.Filter) { f.Kinds = []int{9, 7} }), m, later, false},
		{"another filter added", "c", "pk", "s", append(with(func(*nostr.Filter) {}), nostr.Filter{Kinds: []int{1}}), m, later, false},
		{"another key", "c", "pk2", "s", base, m, later, false},
		{"no key", "c", "", "s", base, m, later, false},
		{"another subscription id", "c", "pk", "s2", base, m, later, false},
		{"another community", "c2", "pk", "s", base, m, later, false},
		{"a write since (the stamp moved)", "c", "pk", "s", base, session.Mark{Value: 9_500, Exists: true, Wrote: wrote + 1}, later, false},
		{"the stamp gone (a reset store)", "c", "pk", "s", base, session.Mark{}, later, false},
		{"before the answer had time to arrive", "c", "pk", "s", base, m, later - 1, false},
		{"expired", "c", "pk", "s", base, m, rec.ExpiresAt, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rec.Covers(c.community, c.pubkey, c.sub, c.filters, c.mark, c.now); got != c.want {
				t.Fatalf("Covers = %v, want %v", got, c.want)
			}
		})
	}
	var none *session.Resume
	if none.Covers("c", "pk", "s", base, m, later) {
		t.Fatal("no record covers a REQ")
	}
}

// TestResumeNoRecordOfAnAnswerReadSoonAfterAWrite: a write stamped within
// ResumeSettle before the answer may commit after its read, unseen, so no
// record is made of it.
func TestResumeNoRecordOfAnAnswerReadSoonAfterAWrite(t *testing.T) {
	fs := []nostr.Filter{{Kinds: []int{9}}}
	if _, ok := session.NewResume("c", "pk", "s", fs, 10_000-session.ResumeSettle+1, 10_000); ok {
		t.Fatal("a record of an answer read within the settle of a write")
	}
	if _, ok := session.NewResume("c", "pk", "s", fs, 10_000-session.ResumeSettle, 10_000); !ok {
		t.Fatal("no record of an answer read a settle after the last write")
	}
	if _, ok := session.NewResume("c", "pk", "s", nil, 0, 10_000); ok {
		t.Fatal("a record of a REQ without filters")
	}
	// A recorded since of -1 (none) accepts any since; a tag order does
	// not change the shape.
	a, _, _, _ := session.ShapeOf([]nostr.Filter{{Kinds: []int{9}, Since: ts(1)}})
	b, _, _, _ := session.ShapeOf([]nostr.Filter{{Kinds: []int{9}}})
	if a != b {
		t.Fatal("since changes the shape")
	}
}
