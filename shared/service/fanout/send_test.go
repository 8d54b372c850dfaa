package fanout

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// stuckSender never finishes a post to connection stuck (a recipient that
// cannot take messages: the post ends only with its context); posts to
// any other connection are accepted at once.
type stuckSender struct {
	stuck string
	mu    sync.Mutex
	posts map[string]int
	// othersWhenStuckEnded is how many posts the other connections had
	// when the stuck post gave up.
	othersWhenStuckEnded int
	disconnected         []string
}

func (s *stuckSender) Post(ctx context.Context, id string, _ []byte) error {
	s.mu.Lock()
	s.posts[id]++
	s.mu.Unlock()
	if id != s.stuck {
		return nil
	}
	<-ctx.Done()
	s.mu.Lock()
	for other, n := range s.posts {
		if other != s.stuck {
			s.othersWhenStuckEnded += n
		}
	}
	s.mu.Unlock()
	return ctx.Err()
}

func (s *stuckSender) Disconnect(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disconnected = append(s.disconnected, id)
	return nil
}

// TestStuckRecipientHoldsNoOne: a recipient whose post never completes
// does not hold the other connections' deliveries (they are all posted
// while its post still hangs), is dropped after its PostTimeout
// (its socket closed, its session forgotten) and gets none of its
// remaining messages.
func TestStuckRecipientHoldsNoOne(t *testing.T) {
	s := &stuckSender{stuck: "stuck", posts: map[string]int{}}
	f := &Fanout{Sessions: sessions.NewRegistry(sessionstest.DynamoDB(t).Store), Sender: s, Log: testkit.Quiet(), Concurrency: 2, PostTimeout: time.Second}
	msgs := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(`["EVENT","s",{}]`)
		}
		return out
	}
	jobs := map[string]*job{
		"stuck": {connection: "stuck", msgs: msgs(3)},
		"a":     {connection: "a", msgs: msgs(4)},
		"b":     {connection: "b", msgs: msgs(2)},
	}
	sent := f.run(context.Background(), []string{"stuck", "a", "b"}, jobs)
	if sent != 6 {
		t.Fatalf("%d messages posted, want the 6 of the other connections", sent)
	}
	if s.othersWhenStuckEnded != 6 {
		t.Fatalf("the others had %d posts when the stuck post gave up, want all 6", s.othersWhenStuckEnded)
	}
	if s.posts["stuck"] != 1 {
		t.Fatalf("%d posts to the stuck connection, want 1 (none after it was dropped)", s.posts["stuck"])
	}
	if len(s.disconnected) != 1 || s.disconnected[0] != "stuck" {
		t.Fatalf("disconnected %v, want the stuck connection", s.disconnected)
	}
	if !errors.Is(wire.ErrTimeout, wire.ErrGone) {
		t.Fatal("a timed-out post is not treated as gone")
	}
}
