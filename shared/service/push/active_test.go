package push

import (
	"testing"
	"time"
)

// TestRememberKeepsWhatThisInstanceStored: the database's "no" for a
// community does not replace what this instance knows to be newer: a
// subscription it stored (markActive) within activeTTL, whether the read
// began before the store or after it (the store's transaction committing
// later), nor an answer asked later; past activeTTL, or over an older
// answer, the new answer is kept.
func TestRememberKeepsWhatThisInstanceStored(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		name   string
		before func(s *Service, now *time.Time)
		asked  time.Duration // after t0
		answer bool
		want   bool
	}{
		{"nothing known", func(*Service, *time.Time) {}, 0, false, false},
		{"stored while the read ran", func(s *Service, now *time.Time) { *now = t0.Add(time.Millisecond); s.markActive("c") }, 0, false, true},
		{"stored before the read began, committed after", func(s *Service, now *time.Time) { s.markActive("c") }, time.Millisecond, false, true},
		{"stored longer ago than activeTTL", func(s *Service, now *time.Time) { s.markActive("c"); *now = t0.Add(activeTTL + time.Second) }, activeTTL + time.Second, false, false},
		{"a later answer", func(s *Service, now *time.Time) { s.remember("c", true, t0.Add(time.Second)) }, 0, false, true},
		{"an older answer", func(s *Service, now *time.Time) { s.remember("c", false, t0) }, time.Second, true, true},
	} {
		now := t0
		s := &Service{Now: func() time.Time { return now }}
		c.before(s, &now)
		if got := s.remember("c", c.answer, t0.Add(c.asked)); got != c.want {
			t.Errorf("%s: remember(%v) = %v, want %v", c.name, c.answer, got, c.want)
		}
	}
}
