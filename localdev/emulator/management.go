package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/buzzrelay/relay/shared/fanout"
)

// Management is the @connections API of the emulated WebSocket API:
// POST (PostToConnection), GET (GetConnection) and DELETE (DeleteConnection)
// on /@connections/{id}, with an optional stage prefix, the id URL-encoded
// as the AWS SDK sends it. Unknown ids answer 410 GoneException. Requests
// are SigV4-signed by the SDK; the emulator does not verify signatures.
func (a *WebSocketAPI) Management() http.Handler {
	return http.HandlerFunc(a.serveManagement)
}

func (a *WebSocketAPI) serveManagement(w http.ResponseWriter, r *http.Request) {
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
		switch err := a.Post(r.Context(), id, data); {
		case errors.Is(err, fanout.ErrTooLarge):
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
		// API Gateway answers at once and closes the socket behind it.
		go func() { _ = s.c.Close(websocket.StatusNormalClosure, "closed by the server") }()
		w.WriteHeader(http.StatusNoContent)
	default:
		awsError(w, http.StatusMethodNotAllowed, "BadRequestException", "method not allowed")
	}
}

// Post is PostToConnection without the HTTP hop, for handlers that run in
// the emulator's process (localdev's in-process path; fanout.Sender): the
// same checks and the same socket write as a POST to @connections. It
// returns an error wrapping fanout.ErrGone for an unknown or closed
// connection and fanout.ErrTooLarge for a message over 128 KB.
func (a *WebSocketAPI) Post(ctx context.Context, id string, data []byte) error {
	if len(data) > MaxMessageSize {
		return fmt.Errorf("emulator: post to %s: %w", id, fanout.ErrTooLarge)
	}
	s := a.lookup(id)
	if s == nil {
		return fmt.Errorf("emulator: post to %s: %w", id, fanout.ErrGone)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.c.Write(ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("emulator: post to %s: %w (%v)", id, fanout.ErrGone, err)
	}
	s.touch()
	return nil
}

// awsError writes an error the AWS SDK's REST-JSON deserializer recognizes.
func awsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}
