// Package awssigntest is what the tests of awssign's clients share: a
// server that records the requests it gets, static credentials with a
// session token, and the comparison of a request with the SDK client's.
package awssigntest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Captured is one request a Capture server saw.
type Captured struct {
	Method, URI string
	Header      http.Header
	Body        []byte
}

// Response is what a Capture server answers: a status, the error type
// (X-Amzn-ErrorType) when not empty, and a JSON body.
type Response struct {
	Status     int
	Code, Body string
}

// Capture is an httptest server that records every request and answers
// the n-th (0-based) with respond(n).
type Capture struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Captured
}

// NewCapture starts a Capture server, closed when t ends.
func NewCapture(t testing.TB, respond func(n int) Response) *Capture {
	c := &Capture{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		n := len(c.reqs)
		c.reqs = append(c.reqs, Captured{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: body})
		c.mu.Unlock()
		resp := respond(n)
		if resp.Code != "" {
			w.Header().Set("X-Amzn-Errortype", resp.Code)
		}
		if resp.Body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(resp.Status)
		_, _ = io.WriteString(w, resp.Body)
	}))
	t.Cleanup(c.Close)
	return c
}

// Requests are the requests seen so far.
func (c *Capture) Requests() []Captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Captured(nil), c.reqs...)
}

// Last is the last request seen; none fails t.
func (c *Capture) Last(t testing.TB) Captured {
	t.Helper()
	r := c.Requests()
	if len(r) == 0 {
		t.Fatal("no request captured")
	}
	return r[len(r)-1]
}

// SDKHTTPClient is the HTTP client the SDK clients were built with before
// awssign: the SDK's buildable client with its idle pool set (0 leaves a
// bound at its default), for the reference clients the tests compare with.
func SDKHTTPClient(maxIdle, maxIdlePerHost int) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		if maxIdle > 0 {
			t.MaxIdleConns = maxIdle
		}
		if maxIdlePerHost > 0 {
			t.MaxIdleConnsPerHost = maxIdlePerHost
		}
	})
}

// Config has static credentials with a session token.
func Config() aws.Config {
	return aws.Config{
		Region:      "eu-west-2",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "FwoGZXIvYXdzEXAMPLE//token+with/odd=chars"),
	}
}

// WithoutTelemetry drops the headers the SDK adds for its own telemetry
// (amz-sdk-invocation-id, a random UUID, and amz-sdk-request) before it
// signs, so that its signature is reproducible. Everything the service
// uses (method, path, body, content headers, host, date, token) stays.
func WithoutTelemetry(s *middleware.Stack) error {
	return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("StripTelemetry", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		if req, ok := in.Request.(*smithyhttp.Request); ok {
			req.Header.Del("Amz-Sdk-Invocation-Id")
			req.Header.Del("Amz-Sdk-Request")
		}
		return next.HandleFinalize(ctx, in)
	}), "Signing", middleware.Before)
}

// SameRequest fails t unless ours is the SDK's request byte for byte in
// everything signed or read by the service (User-Agent aside).
func SameRequest(t testing.TB, sdk, ours Captured) {
	t.Helper()
	if sdk.Method != ours.Method || sdk.URI != ours.URI || string(sdk.Body) != string(ours.Body) {
		t.Errorf("request line or body differ:\n sdk  %s %s %q\n ours %s %s %q", sdk.Method, sdk.URI, sdk.Body, ours.Method, ours.URI, ours.Body)
	}
	if sdk.Header.Get("Authorization") == "" || sdk.Header.Get("X-Amz-Security-Token") == "" {
		t.Fatalf("the SDK request is not signed with a session token: %v", sdk.Header)
	}
	keys := map[string]bool{}
	for k := range sdk.Header {
		keys[k] = true
	}
	for k := range ours.Header {
		keys[k] = true
	}
	for k := range keys {
		if k == "User-Agent" {
			continue
		}
		if a, b := strings.Join(sdk.Header[k], ", "), strings.Join(ours.Header[k], ", "); a != b {
			t.Errorf("%s %s: header %s differs:\n sdk  %q\n ours %q", sdk.Method, sdk.URI, k, a, b)
		}
	}
}

// SignedAt is the signing time of a captured request.
func SignedAt(t testing.TB, r Captured) time.Time {
	t.Helper()
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date: %v", err)
	}
	return at
}
