package emulator

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestPathParameters(t *testing.T) {
	for _, c := range []struct {
		route, path string
		ok          bool
	}{
		{"/{blob}", "/abc.png", true},
		{"/{blob}", "/", false},
		{"/{blob}", "/a/b", false},
		{"/media/{blob}", "/media/abc", true},
		{"/media/{blob}", "/list/abc", false},
		{"/list/{pubkey}", "/list/abc", true},
		{"/upload", "/upload", true},
	} {
		if got := pathMatches(c.route, c.path); got != c.ok {
			t.Errorf("pathMatches(%q, %q) = %v", c.route, c.path, got)
		}
	}
	a := &HTTPAPI{Routes: map[string]HTTPHandler{"GET /{blob}": nil, "GET /healthz": nil}}
	if k, _, ok := a.lookup("GET", "/healthz"); !ok || k != "GET /healthz" {
		t.Errorf("an exact route must win: %q", k)
	}
	if k, _, ok := a.lookup("GET", "/abc"); !ok || k != "GET /{blob}" {
		t.Errorf("a parameter route: %q", k)
	}
	if _, _, ok := a.lookup("DELETE", "/abc"); ok {
		t.Error("another method matched")
	}
}

// A body whose event passes Lambda's 6 MB invoke payload never reaches the
// function: 413, as behind API Gateway.
func TestInvokePayloadLimit(t *testing.T) {
	called := 0
	a := &HTTPAPI{Routes: map[string]HTTPHandler{"PUT /upload": func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		called++
		return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
	}}}
	for _, c := range []struct {
		size, status int
	}{{4 << 20, 200}, {5 << 20, 413}, {11 << 20, 413}} {
		body := bytes.Repeat([]byte{0xff}, c.size) // not UTF-8: base64-encoded
		w := httptest.NewRecorder()
		a.ServeHTTP(w, httptest.NewRequest(http.MethodPut, "/upload", bytes.NewReader(body)))
		if w.Code != c.status {
			t.Errorf("%d bytes: %d, want %d", c.size, w.Code, c.status)
		}
	}
	if called != 1 {
		t.Errorf("the function ran %d times, want 1", called)
	}
}
