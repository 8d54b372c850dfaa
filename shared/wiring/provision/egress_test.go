package provision

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/service/egress"
)

func TestEgressHandler(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	up := map[string]any{"Name": "WebSocket @connections", "Url": "http://" + ln.Addr().String(), "Network": "tcp"}
	down := map[string]any{"Name": "WebSocket @connections", "Url": deadURL, "Network": "tcp"}
	c := egress.New()
	c.Timeout, c.Attempts = 2*time.Second, 1
	h := EgressHandler(slog.New(slog.NewTextHandler(io.Discard, nil)), c)
	for _, tc := range []struct {
		name    string
		ev      Event
		wantErr string // "" = success
	}{
		{"create reachable", Event{RequestType: "Create", ResourceProperties: map[string]any{"Endpoints": []any{up}}}, ""},
		{"update reachable", Event{RequestType: "Update", ResourceProperties: map[string]any{"Endpoints": []any{up}}}, ""},
		{"create unreachable", Event{RequestType: "Create", ResourceProperties: map[string]any{"Endpoints": []any{up, down}}},
			"WebSocket @connections at " + strings.TrimPrefix(deadURL, "http://") + " is unreachable"},
		{"delete checks nothing", Event{RequestType: "Delete", PhysicalResourceID: EgressPhysicalID,
			ResourceProperties: map[string]any{"Endpoints": []any{down}}}, ""},
		{"no endpoints", Event{RequestType: "Create", ResourceProperties: map[string]any{}}, "no Endpoints property"},
		{"empty endpoints", Event{RequestType: "Create", ResourceProperties: map[string]any{"Endpoints": []any{}}}, "list is empty"},
		{"not a list", Event{RequestType: "Create", ResourceProperties: map[string]any{"Endpoints": "kms"}}, "must be a list"},
		{"nameless", Event{RequestType: "Create", ResourceProperties: map[string]any{"Endpoints": []any{map[string]any{"Url": "https://x"}}}}, "needs a Name"},
		{"unknown request", Event{RequestType: "Replace"}, "unknown RequestType"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := h(context.Background(), tc.ev)
			if tc.wantErr == "" {
				if err != nil || resp.PhysicalResourceID != EgressPhysicalID {
					t.Fatalf("got %+v, %v", resp, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
