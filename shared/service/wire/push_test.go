package wire_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/service/sessions"
	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// gateway is a stand-in for API Gateway's @connections: a connection
// refuses posts (410 Gone) until it has been refused closedFor times, as
// one whose $connect has not returned yet; ids in gone never open.
type gateway struct {
	mu        sync.Mutex
	closedFor int
	gone      map[string]bool
	refused   map[string]int
	got       map[string][]string
}

func newGateway(closedFor int, gone ...string) *gateway {
	g := &gateway{closedFor: closedFor, gone: map[string]bool{}, refused: map[string]int{}, got: map[string][]string{}}
	for _, id := range gone {
		g.gone[id] = true
	}
	return g
}

func (g *gateway) Post(_ context.Context, id string, data []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone[id] || g.refused[id] < g.closedFor {
		g.refused[id]++
		return fmt.Errorf("post to %s: %w", id, wire.ErrGone)
	}
	g.got[id] = append(g.got[id], string(data))
	return nil
}

func (g *gateway) frames(id string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.got[id])
}

// TestGreetingWaitsForTheSocketToOpen: the challenge pushed at $connect is
// posted again while API Gateway refuses it (410 Gone: the socket is not
// open before $connect returned), reaches the client once, is the
// challenge ws-message derives for the connection, and records the
// connection among the open ones.
func TestGreetingWaitsForTheSocketToOpen(t *testing.T) {
	ctx := context.Background()
	d := sessions.NewRegistry(sessionstest.DynamoDB(t).Store)
	ch := wire.NewChallenges([]byte("relay key"))
	g := newGateway(3)
	p := &wire.Pusher{Sender: g, Challenges: ch, Open: d, Log: testkit.Quiet()}
	if err := p.Handle(ctx, wire.GreetEvent("conn-1=")); err != nil {
		t.Fatal(err)
	}
	want := string(wire.AuthMessage(ch.For("conn-1=")))
	if got := g.frames("conn-1="); !slices.Equal(got, []string{want}) {
		t.Fatalf("frames %q, want the challenge %s once", got, want)
	}
	if g.refused["conn-1="] != 3 {
		t.Fatalf("refused %d posts, want 3 before it opened", g.refused["conn-1="])
	}
	if ids, err := d.OpenConnections(ctx); err != nil || !slices.Equal(ids, []string{"conn-1="}) {
		t.Fatalf("open connections %v %v", ids, err)
	}
}

// TestGreetingGivesUpOnAConnectionThatNeverOpens: a connection that closed
// before it opened is posted to for the greeting window only, and is not
// recorded as open.
func TestGreetingGivesUpOnAConnectionThatNeverOpens(t *testing.T) {
	ctx := context.Background()
	d := sessions.NewRegistry(sessionstest.DynamoDB(t).Store)
	g := newGateway(0, "left=")
	p := &wire.Pusher{Sender: g, Open: d, Log: testkit.Quiet(), Window: 100 * time.Millisecond}
	if err := p.Greet(ctx, "left="); err != nil {
		t.Fatal(err)
	}
	if g.refused["left="] < 2 || len(g.frames("left=")) != 0 {
		t.Fatalf("refused %d, delivered %v", g.refused["left="], g.frames("left="))
	}
	if ids, _ := d.OpenConnections(ctx); len(ids) != 0 {
		t.Fatalf("a connection that never opened is listed open: %v", ids)
	}
}

// TestLivenessReachesEveryOpenConnection: a tick (any event that is not a
// greeting: EventBridge's scheduled event, an SQS batch) posts the liveness
// frame to every connection the greetings recorded, on every instance, and
// forgets one whose post finds it gone; $disconnect forgets one too.
func TestLivenessReachesEveryOpenConnection(t *testing.T) {
	ctx := context.Background()
	st := sessionstest.DynamoDB(t).Store
	d := sessions.NewRegistry(st)
	instance := func() *sessions.Registry { return sessions.NewRegistry(st) }
	for _, id := range []string{"a=", "b=", "c=", "d="} {
		if err := d.Opened(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Gone(ctx, "d="); err != nil { // its $disconnect
		t.Fatal(err)
	}
	g := newGateway(0, "c=") // closed without a $disconnect
	p := &wire.Pusher{Sender: g, Open: instance(), Log: testkit.Quiet()}
	for _, ev := range []string{
		`{"version":"0","source":"aws.events","detail-type":"Scheduled Event","detail":{}}`,
		`{"Records":[{"messageId":"1","body":"{}","eventSource":"aws:sqs"}]}`,
	} {
		if err := p.Handle(ctx, []byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a=", "b="} {
		if got := g.frames(id); !slices.Equal(got, []string{string(wire.Liveness), string(wire.Liveness)}) {
			t.Errorf("%s got %q, want the liveness frame twice", id, got)
		}
	}
	if n := g.refused["c="]; n != 1 {
		t.Errorf("the gone connection was posted to %d times, want once (then forgotten)", n)
	}
	if got := g.frames("d="); len(got) != 0 {
		t.Errorf("a disconnected connection got %q", got)
	}
	if ids, err := d.OpenConnections(ctx); err != nil || !slices.Equal(ids, []string{"a=", "b="}) {
		t.Fatalf("open connections %v %v, want a= b=", ids, err)
	}
}

// A push function without the session bucket greets but lists no one.
func TestLivenessWithoutARegistrySendsNothing(t *testing.T) {
	g := newGateway(0)
	p := &wire.Pusher{Sender: g, Log: testkit.Quiet()}
	if err := p.Greet(context.Background(), "x="); err != nil || len(g.frames("x=")) != 1 {
		t.Fatalf("greeting without a registry: %v %v", err, g.frames("x="))
	}
	if n, err := p.Tick(context.Background()); n != 0 || err != nil {
		t.Fatalf("tick without a registry: %d %v", n, err)
	}
}

// TestLivenessListsNoOneOnceTheLastConnectionOutlivedTwoHours: a
// connection whose $disconnect never came is listed until it outlived API
// Gateway's 2 hours, then not (each open entry expires on its own), and a
// new connection is listed at once.
func TestLivenessListsNoOneOnceTheLastConnectionOutlivedTwoHours(t *testing.T) {
	ctx := context.Background()
	d := sessions.NewRegistry(sessionstest.DynamoDB(t).Store)
	if ids, err := d.OpenConnections(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("before any connection: %v %v", ids, err)
	}
	at := time.Now()
	d.SetClock(func() time.Time { return at })
	if err := d.Opened(ctx, "old="); err != nil { // its $disconnect never came
		t.Fatal(err)
	}
	at = at.Add(session.Lifetime - time.Minute)
	if ids, _ := d.OpenConnections(ctx); !slices.Equal(ids, []string{"old="}) {
		t.Fatalf("within 2 hours: %v", ids)
	}
	at = at.Add(2 * time.Minute)
	if ids, _ := d.OpenConnections(ctx); len(ids) != 0 {
		t.Fatalf("past 2 hours: %v, want none listed", ids)
	}
	if err := d.Opened(ctx, "new="); err != nil {
		t.Fatal(err)
	}
	if ids, _ := d.OpenConnections(ctx); !slices.Equal(ids, []string{"new="}) {
		t.Fatalf("after a new connection: %v", ids)
	}
}
