package wsrelay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// gatedSender holds every EVENT post until the test releases it and
// records the order in which posts were accepted.
type gatedSender struct {
	mu       sync.Mutex
	started  chan int // the index of each EVENT post as it starts
	release  map[int]chan struct{}
	accepted []string      // EVENT indexes and "EOSE", in acceptance order
	acks     chan struct{} // one per accepted gated post
	gone     bool          // every post answers Gone
	posts    int
}

func (g *gatedSender) Post(_ context.Context, _ string, data []byte) error {
	g.mu.Lock()
	g.posts++
	gone := g.gone
	g.mu.Unlock()
	if gone {
		return fmt.Errorf("fake: %w", wire.ErrGone)
	}
	var msg []json.RawMessage
	_ = json.Unmarshal(data, &msg)
	if bytes.Equal(msg[0], []byte(`"EVENT"`)) {
		var ev struct{ Content string }
		_ = json.Unmarshal(msg[2], &ev)
		var i int
		fmt.Sscan(ev.Content, &i)
		if g.release != nil {
			g.started <- i
			<-g.release[i]
		}
		g.mu.Lock()
		g.accepted = append(g.accepted, ev.Content)
		g.mu.Unlock()
		if g.acks != nil {
			g.acks <- struct{}{}
		}
		return nil
	}
	g.mu.Lock()
	g.accepted = append(g.accepted, string(msg[0]))
	g.mu.Unlock()
	return nil
}

func storedEvents(n int) []json.RawMessage {
	evs := make([]json.RawMessage, n)
	for i := range evs {
		evs[i] = json.RawMessage(fmt.Sprintf(`{"kind":9,"content":"%d"}`, i))
	}
	return evs
}

// TestEOSEAfterEveryEvent: a REQ's stored events are posted concurrently
// and may be accepted in any order (here in reverse), and its EOSE is
// posted only once every event post was accepted.
func TestEOSEAfterEveryEvent(t *testing.T) {
	n := wire.PostsInFlight // all in flight at once
	g := &gatedSender{started: make(chan int, n), release: map[int]chan struct{}{}, acks: make(chan struct{})}
	for i := range n {
		g.release[i] = make(chan struct{})
	}
	p := &replier{r: &Relay{Sender: g, Log: testkit.Quiet(), conns: newConnCache()}, conn: "c1"}
	done := make(chan struct{})
	go func() { p.answerReq(context.Background(), "s", storedEvents(n)); close(done) }()
	for range n { // every post is in flight before any is accepted
		<-g.started
	}
	for i := n - 1; i >= 0; i-- { // accepted last post first
		close(g.release[i])
		<-g.acks
	}
	<-done
	if len(g.accepted) != n+1 || g.accepted[n] != `"EOSE"` {
		t.Fatalf("accepted %v, want %d events and then EOSE", g.accepted, n)
	}
	if g.accepted[0] != fmt.Sprint(n-1) {
		t.Fatalf("accepted %v: want the last event's post first", g.accepted)
	}

	// More events than the window: still every one before EOSE.
	g = &gatedSender{}
	p.r.Sender = g
	p.answerReq(context.Background(), "s", storedEvents(3*n+5))
	want := make([]string, 0, 3*n+5)
	for i := range 3*n + 5 {
		want = append(want, fmt.Sprint(i))
	}
	got := slices.Clone(g.accepted[:len(g.accepted)-1])
	slices.SortFunc(got, func(a, b string) int { var x, y int; fmt.Sscan(a, &x); fmt.Sscan(b, &y); return x - y })
	if !slices.Equal(got, want) || g.accepted[len(g.accepted)-1] != `"EOSE"` {
		t.Fatalf("accepted %v, want every event then EOSE", g.accepted)
	}
}

// TestGoneConnectionGetsNoMorePosts: once a post finds the connection
// gone, the connection is forgotten and no further post starts.
func TestGoneConnectionGetsNoMorePosts(t *testing.T) {
	g := &gatedSender{gone: true}
	p := &replier{r: &Relay{Sender: g, Sessions: sessions.NewRegistry(sessionstest.DynamoDB(t).Store), Log: testkit.Quiet(), conns: newConnCache()}, conn: "c1"}
	p.answerReq(context.Background(), "s", storedEvents(10*wire.PostsInFlight))
	if g.posts > wire.PostsInFlight {
		t.Fatalf("%d posts to a gone connection, want at most the %d already in flight", g.posts, wire.PostsInFlight)
	}
	before := g.posts
	p.send(context.Background(), array("NOTICE", "late"))
	if g.posts != before {
		t.Fatal("a post after the connection was gone")
	}
}
