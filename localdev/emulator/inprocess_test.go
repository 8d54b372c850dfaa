package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/coder/websocket"

	"github.com/buzzrelay/relay/shared/service/wire"
)

// The in-process path posts what a POST to @connections would: the message
// reaches the socket, an unknown connection is gone, an oversized message
// is too large (and the socket stays open).
func TestInProcessPost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok := func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	a := &WebSocketAPI{Connect: ok, Default: ok, Disconnect: ok}
	srv := httptest.NewServer(a)
	defer srv.Close()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var id string
	for id == "" {
		if ids := a.Connections(); len(ids) == 1 {
			id = ids[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	var sender wire.Sender = a
	if err := sender.Post(ctx, id, []byte(`["NOTICE","hi"]`)); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.Read(ctx); err != nil || string(msg) != `["NOTICE","hi"]` {
		t.Fatalf("read %q, %v", msg, err)
	}
	if err := sender.Post(ctx, id, make([]byte, MaxMessageSize+1)); !errors.Is(err, wire.ErrTooLarge) {
		t.Fatalf("oversized post: %v, want ErrTooLarge", err)
	}
	if err := sender.Post(ctx, "nope", []byte(`[]`)); !errors.Is(err, wire.ErrGone) {
		t.Fatalf("post to an unknown connection: %v, want ErrGone", err)
	}
	if err := sender.Post(ctx, id, []byte(`["NOTICE","still open"]`)); err != nil {
		t.Fatalf("the socket closed after a refused post: %v", err)
	}
}

// An in-process Invoke applies the Invoke API's checks and runs the
// function in the background, as InvocationType Event does.
func TestInProcessInvoke(t *testing.T) {
	var runs atomic.Int64
	l := &LambdaAPI{Functions: map[string]AsyncHandler{"fn": func(_ context.Context, p json.RawMessage) error {
		if string(p) != `{"a":1}` {
			t.Errorf("payload %s", p)
		}
		runs.Add(1)
		return nil
	}}}
	ctx := context.Background()
	if err := l.Invoker("fn").InvokeAsync(ctx, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	l.Wait()
	if runs.Load() != 1 || l.Runs() != 1 {
		t.Fatalf("runs %d / %d, want 1", runs.Load(), l.Runs())
	}
	if err := l.Invoker("fn").InvokeAsync(ctx, []byte(`not json`)); err == nil {
		t.Fatal("a payload that is not JSON was accepted")
	}
	if err := l.Invoker("fn").InvokeAsync(ctx, []byte(`"`+strings.Repeat("x", MaxAsyncPayload)+`"`)); err == nil {
		t.Fatal("an oversized payload was accepted")
	}
	if err := l.Invoker("other").InvokeAsync(ctx, []byte(`{}`)); err == nil {
		t.Fatal("an unknown function was invoked")
	}
}
