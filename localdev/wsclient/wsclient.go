// Package wsclient is the raw nostr WebSocket client of the load commands
// (localdev/wsbench, localdev/peerbench): one socket whose writes may come
// from several goroutines, its messages as JSON arrays, and the NIP-42
// login. Each command reads the socket its own way once logged in.
package wsclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/coder/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/kinds"
)

// ReadLimit is the largest message a Conn accepts.
const ReadLimit = 1 << 20

// Conn is one WebSocket connection to a relay.
type Conn struct {
	ws  *websocket.Conn
	wmu sync.Mutex
	// challenge is the NIP-42 challenge Next read first: the relay pushes
	// it as the connection opens and sends it again, the same string, in
	// reply to a first message; Next skips the repeat.
	challenge string
}

// Dial connects to url.
func Dial(ctx context.Context, url string) (*Conn, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	ws.SetReadLimit(ReadLimit)
	return &Conn{ws: ws}, nil
}

// Close closes the socket without a close handshake.
func (c *Conn) Close() { _ = c.ws.CloseNow() }

// Send writes v as one JSON text message; it may be called concurrently.
func (c *Conn) Send(ctx context.Context, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.Write(ctx, websocket.MessageText, data)
}

// Read returns the next message as the relay sent it.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	_, data, err := c.ws.Read(ctx)
	return data, err
}

// Next returns the next message as its JSON array; anything else is an
// error. An AUTH repeating the challenge an earlier one brought is
// skipped. Not for concurrent use.
func (c *Conn) Next(ctx context.Context) ([]json.RawMessage, error) {
	for {
		data, err := c.Read(ctx)
		if err != nil {
			return nil, err
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(data, &parts); err != nil || len(parts) == 0 {
			return nil, fmt.Errorf("relay sent %q", data)
		}
		var ch string
		if Verb(parts) != "AUTH" || len(parts) != 2 || json.Unmarshal(parts[1], &ch) != nil {
			return parts, nil
		}
		if c.challenge == "" {
			c.challenge = ch
			return parts, nil
		}
		if ch != c.challenge {
			return parts, nil
		}
	}
}

// Verb is the first element of message p ("" when it is not a string).
func Verb(p []json.RawMessage) string {
	var s string
	_ = json.Unmarshal(p[0], &s)
	return s
}

// Login authenticates the socket as secret key sk (NIP-42) before any
// other message: a first REQ is refused (CLOSED auth-required:), the
// relay's challenge (pushed as the connection opened, or with that
// refusal) is signed, and the AUTH must be accepted. url is the relay URL
// the AUTH event names.
func (c *Conn) Login(ctx context.Context, url, sk string) error {
	if err := c.Send(ctx, []any{"REQ", "hello", map[string]any{"limit": 0}}); err != nil {
		return err
	}
	for closed := false; c.challenge == "" || !closed; {
		p, err := c.Next(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("waiting for AUTH: %w", err)
		case Verb(p) == "CLOSED":
			closed = true
		case Verb(p) != "AUTH":
			return fmt.Errorf("want CLOSED auth-required, got %v", p)
		}
	}
	ev := nostr.Event{Kind: kinds.Auth, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"relay", url}, {"challenge", c.challenge}}}
	if err := ev.Sign(sk); err != nil {
		return err
	}
	if err := c.Send(ctx, []any{"AUTH", ev}); err != nil {
		return err
	}
	if p, err := c.Next(ctx); err != nil || Verb(p) != "OK" || len(p) < 3 || string(p[2]) != "true" {
		return fmt.Errorf("AUTH refused: %v %v", p, err)
	}
	return nil
}
