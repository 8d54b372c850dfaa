package sessions_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/service/sessions"
)

// markStore is a session store that only has a mark, and counts its reads.
type markStore struct {
	session.Store // nil: any other call panics
	mark          int64
	reads         int
}

func (m *markStore) Mark(context.Context, string) (session.Mark, error) {
	m.reads++
	return session.Mark{Value: m.mark, Exists: true}, nil
}

// Resume is no record: the REQ is answered from the database.
func (m *markStore) Resume(context.Context, session.ResumeParams) (*session.Resume, error) {
	return nil, nil
}

// TestAboveMarkReadsTheMarkOnlyWhenItCanAnswer protects a REQ's cost on
// the DynamoDB path: a REQ for stored events with no since (the newest 50
// of a channel) from a connection with no key can be answered neither
// from the last-commit mark nor from a resume record (kept per key), so
// it pays no read of the mark; one with a since above or below the mark
// does, and is answered by it as before. An authenticated key's REQ reads
// the mark for its resume record (the last case).
func TestAboveMarkReadsTheMarkOnlyWhenItCanAnswer(t *testing.T) {
	since := func(v int64) *nostr.Timestamp { ts := nostr.Timestamp(v); return &ts }
	for _, c := range []struct {
		name    string
		filters []nostr.Filter
		above   bool
		reads   int
	}{
		{"newest 50, no since", []nostr.Filter{{Kinds: []int{9}, Limit: 50}}, false, 0},
		{"limit 0", []nostr.Filter{{Kinds: []int{9}, LimitZero: true}}, true, 0},
		{"since above the mark", []nostr.Filter{{Kinds: []int{9}, Since: since(1001)}}, true, 1},
		{"since at the mark", []nostr.Filter{{Kinds: []int{9}, Since: since(1000)}}, false, 1},
		{"one filter with since, one without", []nostr.Filter{{Since: since(1001)}, {Kinds: []int{9}}}, false, 0},
		{"limit 0 and since above", []nostr.Filter{{LimitZero: true}, {Since: since(2000)}}, true, 1},
		{"no filter", nil, false, 0},
		{"newest 50 of an authenticated key", []nostr.Filter{{Kinds: []int{9}, Limit: 50}}, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &markStore{mark: 1000}
			pubkey := ""
			if strings.HasSuffix(c.name, "authenticated key") {
				pubkey = strings.Repeat("a", 64)
			}
			answer, _, err := sessions.NewRegistry(st).StoreAnswer(context.Background(), "c", pubkey, "sub", c.filters)
			if err != nil {
				t.Fatal(err)
			}
			above := answer == sessions.FromMark
			if above != c.above || st.reads != c.reads {
				t.Errorf("above %v after %d mark reads, want %v after %d", above, st.reads, c.above, c.reads)
			}
		})
	}
}

// raiseStore is a session store whose RaiseMark blocks until released,
// and counts its calls.
type raiseStore struct {
	session.Store // nil: any other call panics
	entered       chan struct{}
	release       chan struct{}
	calls         atomic.Int32
}

func (s *raiseStore) Stamp(_ context.Context, _ string, at int64) (int64, error) { return at, nil }

func (s *raiseStore) RaiseMark(_ context.Context, _ string, v int64, _ bool) (int64, bool, error) {
	if s.calls.Add(1) == 1 {
		close(s.entered)
	}
	<-s.release
	return v, true, nil
}

// TestRaiseMarkOnceForTheWritesInFlight protects the write path's cost on
// the DynamoDB path: the writes in flight when the clock turns a second
// all need the mark raised to the same second; one raise serves them all
// (before, each sent its own conditional write, and each refused one a
// read).
func TestRaiseMarkOnceForTheWritesInFlight(t *testing.T) {
	st := &raiseStore{entered: make(chan struct{}), release: make(chan struct{})}
	reg := sessions.NewRegistry(st)
	ctx := context.Background()
	errs := make(chan error, 20)
	go func() { errs <- reg.RaiseMark(ctx, "c", 100) }()
	<-st.entered
	var started sync.WaitGroup
	for range 19 {
		started.Add(1)
		go func() {
			started.Done()
			errs <- reg.RaiseMark(ctx, "c", 100)
		}()
	}
	started.Wait()
	runtime.Gosched()
	close(st.release)
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("%d raises of the mark for 20 writes of one second, want 1", n)
	}
	// A later second needs a raise of its own.
	if err := reg.RaiseMark(ctx, "c", 101); err != nil {
		t.Fatal(err)
	}
	if n := st.calls.Load(); n != 2 {
		t.Errorf("%d raises after a write of the next second, want 2", n)
	}
}
