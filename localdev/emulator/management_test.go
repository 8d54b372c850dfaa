package emulator

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/coder/websocket"

	"github.com/buzzrelay/relay/shared/service/wire"
)

// A slot is released once, by its holder or after its hold, whichever
// comes first; a request waits for a free one. The counts are read under
// an hour's hold, so a slow machine cannot release a slot before the read.
func TestManagementSlots(t *testing.T) {
	a := &WebSocketAPI{ManagementSlots: 2}
	r1, r2 := a.takeSlotFor(time.Hour), a.takeSlotFor(time.Hour)
	if n := len(a.slots); n != 2 {
		t.Fatalf("%d slots taken, want 2", n)
	}
	r1()
	r1() // a second call releases nothing more
	if n := len(a.slots); n != 1 {
		t.Fatalf("%d slots taken after one release, twice, want 1", n)
	}
	r2()
	if n := len(a.slots); n != 0 {
		t.Fatalf("%d slots taken after every release, want 0", n)
	}

	// Held past their hold, slots come back by themselves: a third request
	// gets one while both holders still hold theirs.
	s1, s2 := a.takeSlotFor(slotHold), a.takeSlotFor(slotHold)
	got := make(chan func())
	go func() { got <- a.takeSlotFor(time.Hour) }() // waits for a slot
	s3 := <-got
	time.Sleep(3 * slotHold)
	s1()
	s2() // after their own release by time: no second one
	if n := len(a.slots); n != 1 {
		t.Fatalf("%d slots taken, want 1 (the third's)", n)
	}
	s3()
	if n := len(a.slots); n != 0 {
		t.Fatalf("%d slots taken after the release, want 0", n)
	}
}

// One slot, and a client that never reads, whose socket buffers fill
// until posts to it block: a post to another connection still goes
// through, long before the blocked writes time out.
func TestManagementSlowSocket(t *testing.T) {
	ok := func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	a := &WebSocketAPI{Connect: ok, Default: ok, Disconnect: ok, ManagementSlots: 1}
	ctx, srv, stalled, stalledID, live, liveID := twoSockets(t, a)

	post := func(id string, body []byte) int {
		resp, err := srv.Client().Post(srv.URL+"/@connections/"+id, "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Fill the stalled socket: 64 MB of posts, far beyond what loopback
	// buffers hold; they block in the socket write until its 10 s timeout.
	big := bytes.Repeat([]byte("x"), MaxMessageSize)
	for range 512 {
		go post(stalledID, big)
	}
	time.Sleep(500 * time.Millisecond) // the buffers are full and writes block by now

	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- post(liveID, []byte(`["NOTICE","through"]`)) }()
	select {
	case status := <-done:
		if status != http.StatusOK {
			t.Fatalf("post to the live connection: status %d", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a post to a live connection waited behind a client that does not read")
	}
	if _, msg, err := live.Read(ctx); err != nil || string(msg) != `["NOTICE","through"]` {
		t.Fatalf("live read %q, %v", msg, err)
	}
	t.Logf("post to the live connection took %v", time.Since(start))
	stalled.CloseNow() // the blocked writes fail now, not at their timeout
}

// A post is accepted into the connection's bounded outbound buffer and
// never waits for the client: posting to a client that never reads goes
// on, each post returning, until the buffer (and the socket's) are full;
// that post drops the client (Gone), every later post is Gone, $disconnect
// runs with the reason, and another connection is served throughout.
func TestPostNeverWaitsForClient(t *testing.T) {
	ok := func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	disconnected := make(chan string, 4)
	bye := func(_ context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		disconnected <- ev.RequestContext.ConnectionID + " " + *ev.RequestContext.DisconnectReason
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	a := &WebSocketAPI{Connect: ok, Default: ok, Disconnect: bye, Costs: Costs{OutboundBuffer: 4}}
	ctx, _, _, stalledID, live, liveID := twoSockets(t, a)

	big := bytes.Repeat([]byte("x"), MaxMessageSize)
	accepted := 0
	var err error
	for accepted < 100000 {
		if err = a.Post(ctx, stalledID, big); err != nil {
			break
		}
		accepted++
		if accepted%16 == 0 { // the live connection is served all along
			if err := a.Post(ctx, liveID, []byte(`["NOTICE","through"]`)); err != nil {
				t.Fatalf("post to the live connection: %v", err)
			}
			if _, msg, err := live.Read(ctx); err != nil || string(msg) != `["NOTICE","through"]` {
				t.Fatalf("live read %q, %v", msg, err)
			}
		}
	}
	if !errors.Is(err, wire.ErrGone) {
		t.Fatalf("after %d accepted posts to a client that does not read: %v, want Gone", accepted, err)
	}
	if err := a.Post(ctx, stalledID, []byte(`["NOTICE","late"]`)); !errors.Is(err, wire.ErrGone) {
		t.Fatalf("post after the drop: %v, want Gone", err)
	}
	select {
	case d := <-disconnected:
		if !strings.HasPrefix(d, stalledID+" ") || !strings.Contains(d, "does not read") {
			t.Fatalf("$disconnect %q, want %s's with why", d, stalledID)
		}
	case <-ctx.Done():
		t.Fatal("no $disconnect for the dropped client")
	}
	if err := a.Post(ctx, liveID, []byte(`["NOTICE","after"]`)); err != nil {
		t.Fatalf("post to the live connection after the drop: %v", err)
	}
	t.Logf("%d posts of 128 KB accepted before the drop", accepted)
}

// twoSockets serves a and opens two sockets to it (closed with the test):
// one the test will not read, one it will.
func twoSockets(t *testing.T, a *WebSocketAPI) (ctx context.Context, srv *httptest.Server,
	stalled *websocket.Conn, stalledID string, live *websocket.Conn, liveID string) {
	t.Helper()
	srv = httptest.NewServer(a.Wrap(http.NotFoundHandler()))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	stalled, stalledID = dialNew(ctx, t, a, srv)
	t.Cleanup(func() { stalled.CloseNow() })
	live, liveID = dialNew(ctx, t, a, srv)
	t.Cleanup(func() { live.CloseNow() })
	return ctx, srv, stalled, stalledID, live, liveID
}

// dialNew opens a socket to srv and returns it with the connection id a
// gave it.
func dialNew(ctx context.Context, t *testing.T, a *WebSocketAPI, srv *httptest.Server) (*websocket.Conn, string) {
	t.Helper()
	before := map[string]bool{}
	for _, id := range a.Connections() {
		before[id] = true
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for {
		for _, id := range a.Connections() {
			if !before[id] {
				return c, id
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPostDuringConnectIsGoneUntilTheUpgrade: as behind API Gateway, a
// post to a connection while its $connect runs is refused with 410 Gone
// (the socket opens only once $connect returned and the upgrade
// completed), so a greeting posted at $connect must wait for it; posts
// once it is open reach the client.
func TestPostDuringConnectIsGoneUntilTheUpgrade(t *testing.T) {
	during := make(chan error, 1)
	var a *WebSocketAPI
	connect := func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		during <- a.Post(ctx, ev.RequestContext.ConnectionID, []byte(`["AUTH","too early"]`))
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	ok := func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	a = &WebSocketAPI{Connect: connect, Default: ok, Disconnect: ok}
	srv := httptest.NewServer(a.Wrap(http.NotFoundHandler()))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := <-during; !errors.Is(err, wire.ErrGone) {
		t.Fatalf("post during $connect: %v, want Gone", err)
	}
	ids := a.Connections()
	if len(ids) != 1 {
		t.Fatalf("open connections %v", ids)
	}
	if err := a.Post(ctx, ids[0], []byte(`["AUTH","open"]`)); err != nil {
		t.Fatalf("post once open: %v", err)
	}
	if _, data, err := c.Read(ctx); err != nil || string(data) != `["AUTH","open"]` {
		t.Fatalf("the client read %q %v, want only the post made once open", data, err)
	}
}
