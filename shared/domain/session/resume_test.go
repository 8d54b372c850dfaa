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
	rec, ok := session.NewResume("c", "pk", "s", base, wrote, at, 0) // an answer that sent nothing
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
	if _, ok := session.NewResume("c", "pk", "s", fs, 10_000-session.ResumeSettle+1, 10_000, 0); ok {
		t.Fatal("a record of an answer read within the settle of a write")
	}
	if _, ok := session.NewResume("c", "pk", "s", fs, 10_000-session.ResumeSettle, 10_000, 0); !ok {
		t.Fatal("no record of an answer read a settle after the last write")
	}
	if _, ok := session.NewResume("c", "pk", "s", nil, 0, 10_000, 0); ok {
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

// TestResumeOfAnAnswerWithEventsNeedsTheClientToSayItHoldsThem: an id
// and filters alone do not say the client holds what was sent
// (nostr-tools numbers its subscriptions sub:1, sub:2… and go-nostr 1, 2…
// on every connection, so an app started afresh asks the same again with
// nothing): once the answer sent events, only a REQ whose every filter
// starts at most ReplaySlack below the newest of them (Buzz desktop's
// replay: last seen - 5 s) is answered from the record.
func TestResumeOfAnAnswerWithEventsNeedsTheClientToSayItHoldsThem(t *testing.T) {
	const at, wrote, newest int64 = 10_000, 9_000, 9_400
	fresh := []nostr.Filter{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"x"}}, Limit: 50}}
	rec, ok := session.NewResume("c", "pk", "sub:1", fresh, wrote, at, newest)
	if !ok {
		t.Fatal("no record")
	}
	m := session.Mark{Value: newest, Exists: true, Wrote: wrote}
	since := func(v int64) []nostr.Filter {
		fs := []nostr.Filter{fresh[0].Clone()}
		fs[0].Since = ts(v)
		return fs
	}
	for _, c := range []struct {
		name    string
		filters []nostr.Filter
		want    bool
	}{
		{"an app started afresh: the same id and filters, no since", fresh, false},
		{"a since older than what was sent", since(newest - 3600), false},
		{"a since just past the slack", since(newest - session.ReplaySlack - 1), false},
		{"buzz's replay: last seen - 5 s", since(newest - session.ReplaySlack), true},
		{"a since at the newest", since(newest), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := rec.Covers("c", "pk", "sub:1", c.filters, m, at+session.ResumeSettle); got != c.want {
				t.Fatalf("Covers = %v, want %v", got, c.want)
			}
		})
	}
}
