package apigw

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/smithy-go/middleware"

	"github.com/buzzrelay/relay/shared/aws/awssign"
	"github.com/buzzrelay/relay/shared/aws/awssign/awssigntest"
	"github.com/buzzrelay/relay/shared/service/wire"
)

func ok200(int) awssigntest.Response { return awssigntest.Response{Status: http.StatusOK} }

// sdkManagement is the SDK client as NewManagement built it before.
func sdkManagement(cfg aws.Config, endpoint string, maxConns int, apiOptions ...func(*middleware.Stack) error) *apigatewaymanagementapi.Client {
	return apigatewaymanagementapi.NewFromConfig(cfg, func(o *apigatewaymanagementapi.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.HTTPClient = awssigntest.SDKHTTPClient(maxConns*2, maxConns)
		o.APIOptions = append(o.APIOptions, apiOptions...)
	})
}

// ids are connection ids as API Gateway makes them, and worse: base64
// with '=', '+' and '/'.
var ids = []string{"LmzSdfl8IAMCJqw=", "a+b/c==", "Zm9v/YmFy+YQ", "A-_.~z", "x y%2F@:"}

// Post and Disconnect send the request the SDK's client sends, signed with
// the same signature: same method, escaped path, body, token and
// Authorization, with and without a stage path.
func TestManagementMatchesSDK(t *testing.T) {
	srv := awssigntest.NewCapture(t, ok200)
	cfg := awssigntest.Config()
	ctx := context.Background()
	for _, base := range []string{srv.URL, srv.URL + "/prod", srv.URL + "/prod/"} {
		sdk := sdkManagement(cfg, base, 4, awssigntest.WithoutTelemetry)
		m := NewManagement(cfg, base, 4)
		for _, id := range ids {
			data := []byte(`["EVENT","sub",{"id":"` + id + `"}]`)
			if _, err := sdk.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(id), Data: data}); err != nil {
				t.Fatalf("SDK post %s: %v", id, err)
			}
			want := srv.Last(t)
			at := awssigntest.SignedAt(t, want)
			m.c.Now = func() time.Time { return at }
			if err := m.Post(ctx, id, data); err != nil {
				t.Fatalf("post %s: %v", id, err)
			}
			awssigntest.SameRequest(t, want, srv.Last(t))

			if _, err := sdk.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: aws.String(id)}); err != nil {
				t.Fatalf("SDK delete %s: %v", id, err)
			}
			want = srv.Last(t)
			at = awssigntest.SignedAt(t, want)
			if err := m.Disconnect(ctx, id); err != nil {
				t.Fatalf("disconnect %s: %v", id, err)
			}
			awssigntest.SameRequest(t, want, srv.Last(t))
		}
	}
	// On the wire the label is escaped, '/' included; the '@' of the
	// route is not.
	m := NewManagement(cfg, srv.URL+"/prod", 1)
	if err := m.Post(ctx, "a+b/c=", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Last(t).URI; got != "/prod/@connections/a%2Bb%2Fc%3D" {
		t.Errorf("path %q", got)
	}
	if auth := srv.Last(t).Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-2/execute-api/aws4_request") || !strings.Contains(auth, "x-amz-security-token") {
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
		respond  func(n int) awssigntest.Response
		requests int
		check    func(error) bool
	}{
		{"200", ok200, 1, func(err error) bool { return err == nil }},
		{"410", func(int) awssigntest.Response {
			return awssigntest.Response{Status: 410, Code: "GoneException", Body: `{"message":"Gone"}`}
		}, 1,
			func(err error) bool { return errors.Is(err, wire.ErrGone) }},
		{"413", func(int) awssigntest.Response {
			return awssigntest.Response{Status: 413, Code: "PayloadTooLargeException", Body: `{"message":"Request entity too large"}`}
		}, 1,
			func(err error) bool { return errors.Is(err, wire.ErrTooLarge) }},
		{"403", func(int) awssigntest.Response {
			return awssigntest.Response{Status: 403, Code: "ForbiddenException", Body: `{"message":"Forbidden"}`}
		}, 1,
			func(err error) bool {
				return err != nil && !errors.Is(err, wire.ErrGone) &&
					err.Error() == "apigw: post to connection "+id+": status 403 ForbiddenException: Forbidden"
			}},
		{"429 then 200", func(n int) awssigntest.Response {
			if n == 0 {
				return awssigntest.Response{Status: 429, Code: "LimitExceededException", Body: `{"message":"Limit Exceeded"}`}
			}
			return awssigntest.Response{Status: 200}
		}, 2, func(err error) bool { return err == nil }},
		{"500 three times", func(int) awssigntest.Response {
			return awssigntest.Response{Status: 500, Body: `{"message":"Internal server error"}`}
		}, 3,
			func(err error) bool {
				var se *awssign.StatusError
				return errors.As(err, &se) && se.StatusCode == 500 && se.Attempts == 3 &&
					strings.HasPrefix(err.Error(), "apigw: post to connection "+id+": status 500: Internal server error")
			}},
		{"502 not JSON", func(int) awssigntest.Response {
			return awssigntest.Response{Status: 502, Body: "<html>\n  Bad   gateway\n</html>"}
		}, 3,
			func(err error) bool {
				return err != nil && strings.Contains(err.Error(), "status 502: <html> Bad gateway </html>")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := awssigntest.NewCapture(t, tc.respond)
			m := NewManagement(awssigntest.Config(), srv.URL+"/prod", 2)
			m.c.Retry = fast
			err := m.Post(context.Background(), id, data)
			if !tc.check(err) {
				t.Errorf("error %v", err)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}

	t.Run("ctx cancelled during backoff", func(t *testing.T) {
		srv := awssigntest.NewCapture(t, func(int) awssigntest.Response {
			return awssigntest.Response{Status: 429, Code: "LimitExceededException", Body: `{"message":"Limit Exceeded"}`}
		})
		m := NewManagement(awssigntest.Config(), srv.URL, 2)
		m.c.Retry = awssign.Retry{MaxAttempts: 3, BaseDelay: 20 * time.Second, MaxDelay: 20 * time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err := m.Post(ctx, id, data)
		var se *awssign.StatusError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || se.StatusCode != 429 || time.Since(start) > 5*time.Second {
			t.Errorf("error %v after %v", err, time.Since(start))
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})

	t.Run("deadline before the retry", func(t *testing.T) {
		srv := awssigntest.NewCapture(t, func(int) awssigntest.Response { return awssigntest.Response{Status: 503} })
		m := NewManagement(awssigntest.Config(), srv.URL, 2)
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
		srv := awssigntest.NewCapture(t, func(n int) awssigntest.Response { return awssigntest.Response{Status: []int{204, 410}[n%2]} })
		m := NewManagement(awssigntest.Config(), srv.URL, 2)
		if err := m.Disconnect(context.Background(), id); err != nil {
			t.Errorf("204: %v", err)
		}
		if err := m.Disconnect(context.Background(), id); !errors.Is(err, wire.ErrGone) || !strings.HasPrefix(err.Error(), "apigw: delete connection "+id+": ") {
			t.Errorf("410: %v", err)
		}
		if r := srv.Last(t); r.Method != http.MethodDelete || r.URI != "/@connections/LmzSdfl8IAMCJqw%3D" || len(r.Body) != 0 {
			t.Errorf("request %+v", r)
		}
	})

	t.Run("bad endpoint and id", func(t *testing.T) {
		if err := NewManagement(awssigntest.Config(), "not a url", 2).Post(context.Background(), id, data); err == nil {
			t.Error("bad endpoint: no error")
		}
		if err := NewManagement(awssigntest.Config(), "http://127.0.0.1:1", 2).Post(context.Background(), "", data); err == nil {
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
	cfg := awssigntest.Config()
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
