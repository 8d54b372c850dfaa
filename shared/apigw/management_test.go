package apigw

import (
	"context"
	"errors"
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
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/buzzrelay/relay/shared/awssign"
	"github.com/buzzrelay/relay/shared/fanout"
)

// captured is one request a capture server saw.
type captured struct {
	Method, URI string
	Header      http.Header
	Body        []byte
}

// capture is an httptest server that records every request and answers
// with respond(n) for the n-th (0-based).
type capture struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

type response struct {
	status int
	code   string // X-Amzn-ErrorType
	body   string
}

func newCapture(t *testing.T, respond func(n int) response) *capture {
	c := &capture{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		n := len(c.reqs)
		c.reqs = append(c.reqs, captured{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: body})
		c.mu.Unlock()
		resp := respond(n)
		if resp.code != "" {
			w.Header().Set("X-Amzn-Errortype", resp.code)
		}
		if resp.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(resp.status)
		_, _ = io.WriteString(w, resp.body)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *capture) requests() []captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]captured(nil), c.reqs...)
}

func (c *capture) last(t *testing.T) captured {
	t.Helper()
	r := c.requests()
	if len(r) == 0 {
		t.Fatal("no request captured")
	}
	return r[len(r)-1]
}

func ok200(int) response { return response{status: http.StatusOK} }

// testConfig has static credentials with a session token.
func testConfig() aws.Config {
	return aws.Config{
		Region:      "eu-west-2",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "FwoGZXIvYXdzEXAMPLE//token+with/odd=chars"),
	}
}

// withoutTelemetry drops the headers the SDK adds for its own telemetry
// (amz-sdk-invocation-id, a random UUID, and amz-sdk-request) before it
// signs, so that its signature is reproducible. Everything the service
// uses (method, path, body, content headers, host, date, token) stays.
func withoutTelemetry(s *middleware.Stack) error {
	return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("StripTelemetry", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		if req, ok := in.Request.(*smithyhttp.Request); ok {
			req.Header.Del("Amz-Sdk-Invocation-Id")
			req.Header.Del("Amz-Sdk-Request")
		}
		return next.HandleFinalize(ctx, in)
	}), "Signing", middleware.Before)
}

// sdkManagement is the SDK client as NewManagement built it before.
func sdkManagement(cfg aws.Config, endpoint string, maxConns int, apiOptions ...func(*middleware.Stack) error) *apigatewaymanagementapi.Client {
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = maxConns * 2
		t.MaxIdleConnsPerHost = maxConns
	})
	return apigatewaymanagementapi.NewFromConfig(cfg, func(o *apigatewaymanagementapi.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.HTTPClient = hc
		o.APIOptions = append(o.APIOptions, apiOptions...)
	})
}

// sameRequest fails unless ours is the SDK's request byte for byte in
// everything signed or read by the service (User-Agent aside).
func sameRequest(t *testing.T, sdk, ours captured) {
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
			t.Errorf("header %s differs:\n sdk  %q\n ours %q", k, a, b)
		}
	}
}

// signedAt is the signing time of a captured request.
func signedAt(t *testing.T, r captured) time.Time {
	t.Helper()
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date: %v", err)
	}
	return at
}

// ids are connection ids as API Gateway makes them, and worse: base64
// with '=', '+' and '/'.
var ids = []string{"LmzSdfl8IAMCJqw=", "a+b/c==", "Zm9v/YmFy+YQ", "A-_.~z", "x y%2F@:"}

// Post and Disconnect send the request the SDK's client sends, signed with
// the same signature: same method, escaped path, body, token and
// Authorization, with and without a stage path.
func TestManagementMatchesSDK(t *testing.T) {
	srv := newCapture(t, ok200)
	cfg := testConfig()
	ctx := context.Background()
	for _, base := range []string{srv.URL, srv.URL + "/prod", srv.URL + "/prod/"} {
		sdk := sdkManagement(cfg, base, 4, withoutTelemetry)
		m := NewManagement(cfg, base, 4)
		for _, id := range ids {
			data := []byte(`["EVENT","sub",{"id":"` + id + `"}]`)
			if _, err := sdk.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(id), Data: data}); err != nil {
				t.Fatalf("SDK post %s: %v", id, err)
			}
			want := srv.last(t)
			at := signedAt(t, want)
			m.c.Now = func() time.Time { return at }
			if err := m.Post(ctx, id, data); err != nil {
				t.Fatalf("post %s: %v", id, err)
			}
			sameRequest(t, want, srv.last(t))

			if _, err := sdk.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: aws.String(id)}); err != nil {
				t.Fatalf("SDK delete %s: %v", id, err)
			}
			want = srv.last(t)
			at = signedAt(t, want)
			if err := m.Disconnect(ctx, id); err != nil {
				t.Fatalf("disconnect %s: %v", id, err)
			}
			sameRequest(t, want, srv.last(t))
		}
	}
	// On the wire the label is escaped, '/' included; the '@' of the
	// route is not.
	m := NewManagement(cfg, srv.URL+"/prod", 1)
	if err := m.Post(ctx, "a+b/c=", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := srv.last(t).URI; got != "/prod/@connections/a%2Bb%2Fc%3D" {
		t.Errorf("path %q", got)
	}
	if auth := srv.last(t).Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-2/execute-api/aws4_request") || !strings.Contains(auth, "x-amz-security-token") {
		t.Errorf("Authorization %q", auth)
	}
}

// Statuses map to fanout's errors; throttling and 5xx are retried, at
// most 3 attempts, within the context.
func TestManagementStatuses(t *testing.T) {
	const id = "LmzSdfl8IAMCJqw="
	data := []byte(`["OK"]`)
	fast := awssign.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond}
	tests := []struct {
		name     string
		respond  func(n int) response
		requests int
		check    func(error) bool
	}{
		{"200", ok200, 1, func(err error) bool { return err == nil }},
		{"410", func(int) response { return response{410, "GoneException", `{"message":"Gone"}`} }, 1,
			func(err error) bool { return errors.Is(err, fanout.ErrGone) }},
		{"413", func(int) response {
			return response{413, "PayloadTooLargeException", `{"message":"Request entity too large"}`}
		}, 1,
			func(err error) bool { return errors.Is(err, fanout.ErrTooLarge) }},
		{"403", func(int) response { return response{403, "ForbiddenException", `{"message":"Forbidden"}`} }, 1,
			func(err error) bool {
				return err != nil && !errors.Is(err, fanout.ErrGone) &&
					err.Error() == "apigw: post to connection "+id+": status 403 ForbiddenException: Forbidden"
			}},
		{"429 then 200", func(n int) response {
			if n == 0 {
				return response{429, "LimitExceededException", `{"message":"Limit Exceeded"}`}
			}
			return response{status: 200}
		}, 2, func(err error) bool { return err == nil }},
		{"500 three times", func(int) response { return response{500, "", `{"message":"Internal server error"}`} }, 3,
			func(err error) bool {
				var se *awssign.StatusError
				return errors.As(err, &se) && se.StatusCode == 500 && se.Attempts == 3 &&
					strings.HasPrefix(err.Error(), "apigw: post to connection "+id+": status 500: Internal server error")
			}},
		{"502 not JSON", func(int) response { return response{502, "", "<html>\n  Bad   gateway\n</html>"} }, 3,
			func(err error) bool {
				return err != nil && strings.Contains(err.Error(), "status 502: <html> Bad gateway </html>")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCapture(t, tc.respond)
			m := NewManagement(testConfig(), srv.URL+"/prod", 2)
			m.c.Retry = fast
			err := m.Post(context.Background(), id, data)
			if !tc.check(err) {
				t.Errorf("error %v", err)
			}
			if n := len(srv.requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}

	t.Run("ctx cancelled during backoff", func(t *testing.T) {
		srv := newCapture(t, func(int) response { return response{429, "LimitExceededException", `{"message":"Limit Exceeded"}`} })
		m := NewManagement(testConfig(), srv.URL, 2)
		m.c.Retry = awssign.Retry{MaxAttempts: 3, BaseDelay: 20 * time.Second, MaxDelay: 20 * time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err := m.Post(ctx, id, data)
		var se *awssign.StatusError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || se.StatusCode != 429 || time.Since(start) > 5*time.Second {
			t.Errorf("error %v after %v", err, time.Since(start))
		}
		if n := len(srv.requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})

	t.Run("deadline before the retry", func(t *testing.T) {
		srv := newCapture(t, func(int) response { return response{503, "", ""} })
		m := NewManagement(testConfig(), srv.URL, 2)
		m.c.Retry = awssign.Retry{MaxAttempts: 3, BaseDelay: 20 * time.Second, MaxDelay: 20 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		err := m.Post(ctx, id, data)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "status 503") || time.Since(start) > 2*time.Second {
			t.Errorf("error %v after %v", err, time.Since(start))
		}
	})

	t.Run("disconnect", func(t *testing.T) {
		srv := newCapture(t, func(n int) response { return response{status: []int{204, 410}[n%2]} })
		m := NewManagement(testConfig(), srv.URL, 2)
		if err := m.Disconnect(context.Background(), id); err != nil {
			t.Errorf("204: %v", err)
		}
		if err := m.Disconnect(context.Background(), id); !errors.Is(err, fanout.ErrGone) || !strings.HasPrefix(err.Error(), "apigw: delete connection "+id+": ") {
			t.Errorf("410: %v", err)
		}
		if r := srv.last(t); r.Method != http.MethodDelete || r.URI != "/@connections/LmzSdfl8IAMCJqw%3D" || len(r.Body) != 0 {
			t.Errorf("request %+v", r)
		}
	})

	t.Run("bad endpoint and id", func(t *testing.T) {
		if err := NewManagement(testConfig(), "not a url", 2).Post(context.Background(), id, data); err == nil {
			t.Error("bad endpoint: no error")
		}
		if err := NewManagement(testConfig(), "http://127.0.0.1:1", 2).Post(context.Background(), "", data); err == nil {
			t.Error("empty id: no error")
		}
	})
}

// BenchmarkPost compares the SDK's PostToConnection with Management.Post
// against one local server answering 200.
func BenchmarkPost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	cfg := testConfig()
	endpoint := srv.URL + "/prod"
	data := []byte(`["EVENT","sub",{"id":"5c83da77af1dec6d7289834998ad7aafbd9e2191396d75ec3cc27f5a77226f36","pubkey":"f7234bd4c1394dda46d09f35bd384dd30cc552ad5541990f98844fb06676e9ca","created_at":1700000000,"kind":1,"tags":[],"content":"hello","sig":"908a15e46fb4d8675bab026fc230a0e3542bfade63da02d542fb78b2a8513fcd0092619a2c8c1221e581946e0191f2af505dfdf8657a414dbca329186f009262"}]`)
	ctx := context.Background()
	const id = "LmzSdfl8IAMCJqw="
	b.Run("sdk", func(b *testing.B) {
		c := sdkManagement(cfg, endpoint, 4)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(id), Data: data}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		m := NewManagement(cfg, endpoint, 4)
		b.ReportAllocs()
		for b.Loop() {
			if err := m.Post(ctx, id, data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
