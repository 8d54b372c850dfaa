package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/buzzrelay/relay/shared/service/wire"
)

// Management is the @connections API of the emulated WebSocket API:
// POST (PostToConnection), GET (GetConnection) and DELETE (DeleteConnection)
// on /@connections/{id}, with an optional stage prefix, the id URL-encoded
// as the AWS SDK sends it. Unknown ids answer 410 GoneException. Requests
// are SigV4-signed by the SDK; the emulator does not verify signatures.
//
// # Slots
//
// Behind AWS, @connections is a service of its own: the posts of the
// fan-out function's instances never take a CPU from the relay's
// handlers. In localdev it shares the relay's process, and each post is a
// goroutine there: thousands a second of them, runnable all at once, put
// a publisher's next message behind every one (Go's scheduler has no
// priorities). So a request holds one of ManagementSlots (one per CPU by
// default) while it is worked on: requests beyond that wait their turn
// parked, costing nothing, and a handler's goroutine waits behind at most
// that many. A request keeps its slot at most slotHold (a post waiting out
// Costs.PostLatency gives it back). No post waits for a client (Post: the
// outbound buffer). The emulator's in-process Post, the handlers' own
// replies in make dev, takes no slot.
func (a *WebSocketAPI) Management() http.Handler {
	return http.HandlerFunc(a.serveManagement)
}

func (a *WebSocketAPI) serveManagement(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		// API Gateway's time for a post, spent without a slot.
		if err := a.postLatency(r.Context()); err != nil {
			awsError(w, http.StatusGatewayTimeout, "InternalServerErrorException", "request ended")
			return
		}
	}
	release := a.takeSlot()
	defer release()
	p := r.URL.EscapedPath()
	i := strings.Index(p, "/@connections/")
	if i < 0 {
		awsError(w, http.StatusNotFound, "NotFoundException", "no such route")
		return
	}
	id, err := url.PathUnescape(p[i+len("/@connections/"):])
	if err != nil || id == "" {
		awsError(w, http.StatusBadRequest, "BadRequestException", "invalid connection id")
		return
	}
	if r.Method == http.MethodPost {
		data, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageSize+1))
		if err != nil {
			awsError(w, http.StatusBadRequest, "BadRequestException", "could not read body")
			return
		}
		switch err := a.accept(id, data); {
		case errors.Is(err, wire.ErrTooLarge):
			awsError(w, http.StatusRequestEntityTooLarge, "PayloadTooLargeException", "message is larger than 128 KB")
		case err != nil:
			awsError(w, http.StatusGone, "GoneException", "connection "+id+" is gone")
		default:
			w.WriteHeader(http.StatusOK)
		}
		return
	}
	s := a.lookup(id)
	if s == nil {
		awsError(w, http.StatusGone, "GoneException", "connection "+id+" is gone")
		return
	}
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"connectedAt":  s.connectedAt.UTC().Format(time.RFC3339),
			"lastActiveAt": time.Unix(0, s.lastActive.Load()).UTC().Format(time.RFC3339),
			"identity":     map[string]string{"sourceIp": s.sourceIP, "userAgent": s.userAgent},
		})
	case http.MethodDelete:
		if a.DeleteConnection(r.Context(), id) != nil {
			awsError(w, http.StatusGone, "GoneException", "connection "+id+" is gone")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		awsError(w, http.StatusMethodNotAllowed, "BadRequestException", "method not allowed")
	}
}

// slotHold is how long a request keeps its slot (Management: Slots).
const slotHold = 2 * time.Millisecond

// takeSlot waits for a free management slot and returns its release,
// which also runs by itself after slotHold; it releases the slot once.
func (a *WebSocketAPI) takeSlot() func() { return a.takeSlotFor(slotHold) }

// takeSlotFor is takeSlot with the slot held at most hold.
func (a *WebSocketAPI) takeSlotFor(hold time.Duration) func() {
	a.slotsOnce.Do(func() {
		n := a.ManagementSlots
		if n <= 0 {
			n = runtime.GOMAXPROCS(0)
		}
		a.slots = make(chan struct{}, n)
	})
	a.slots <- struct{}{}
	free := sync.OnceFunc(func() { <-a.slots })
	t := time.AfterFunc(hold, free)
	return func() {
		t.Stop()
		free()
	}
}

// Post is PostToConnection without the HTTP hop, for handlers that run in
// the emulator's process (localdev's in-process path; wire.Sender): the
// same checks and the same outbound buffer as a POST to @connections. It
// returns an error wrapping wire.ErrGone for an unknown or closed
// connection and wire.ErrTooLarge for a message over 128 KB.
//
// As in API Gateway, a post returns once the message is accepted (after
// Costs.PostLatency), not once the client read it: it goes into the
// connection's bounded outbound buffer, which the socket's writer drains.
// A client that does not read fills it; the post that finds it full
// drops the client (the socket closes with 1008, $disconnect runs) and
// answers Gone, as does every later post. No post ever waits for a
// client. data must not be changed after Post returns.
func (a *WebSocketAPI) Post(ctx context.Context, id string, data []byte) error {
	if err := a.postLatency(ctx); err != nil {
		return fmt.Errorf("emulator: post to %s: %w", id, err)
	}
	return a.accept(id, data)
}

// Posted is how many posts were accepted for a client so far: the
// messages API Gateway sent (and bills).
func (a *WebSocketAPI) Posted() int64 { return a.posted.Load() }

// postLatency spends Costs.PostLatency, or less when ctx ends first.
func (a *WebSocketAPI) postLatency(ctx context.Context) error {
	d := a.Costs.PostLatency
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// accept takes data into connection id's outbound buffer (Post).
func (a *WebSocketAPI) accept(id string, data []byte) error {
	if len(data) > MaxMessageSize {
		return fmt.Errorf("emulator: post to %s: %w", id, wire.ErrTooLarge)
	}
	s := a.lookup(id)
	if s == nil {
		return fmt.Errorf("emulator: post to %s: %w", id, wire.ErrGone)
	}
	select {
	case s.out <- data:
		s.touch()
		a.posted.Add(1)
		return nil
	default:
		a.drop(s, fmt.Sprintf("%d messages waiting: the client does not read", cap(s.out)))
		return fmt.Errorf("emulator: post to %s: %w (outbound buffer full)", id, wire.ErrGone)
	}
}

// DeleteConnection is DeleteConnection without the HTTP hop: it answers
// at once and closes the socket behind it, as API Gateway does.
func (a *WebSocketAPI) DeleteConnection(_ context.Context, id string) error {
	s := a.lookup(id)
	if s == nil {
		return fmt.Errorf("emulator: delete connection %s: %w", id, wire.ErrGone)
	}
	go func() {
		if c := s.conn(); c != nil {
			_ = c.Close(websocket.StatusNormalClosure, "closed by the server")
		}
	}()
	return nil
}

// drop closes s, a client that does not take its messages: it is gone for
// every later post at once; its socket ends and $disconnect runs.
func (a *WebSocketAPI) drop(s *socket, why string) {
	s.dropped.CompareAndSwap(nil, why)
	a.mu.Lock()
	if a.conns[s.id] == s {
		delete(a.conns, s.id)
	}
	a.mu.Unlock()
	s.closeNow()
}

// awsError writes an error the AWS SDK's REST-JSON deserializer recognizes.
func awsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}
