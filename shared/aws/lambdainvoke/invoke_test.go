package lambdainvoke

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/buzzrelay/relay/shared/aws/awssign"
	"github.com/buzzrelay/relay/shared/aws/awssign/awssigntest"
)

func accepted(int) awssigntest.Response { return awssigntest.Response{Status: http.StatusAccepted} }

// sdkLambda is the SDK client as New built it before.
func sdkLambda(cfg aws.Config, endpoint string, maxConns int, apiOptions ...func(*middleware.Stack) error) *lambda.Client {
	return lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.HTTPClient = awssigntest.SDKHTTPClient(0, maxConns)
		o.APIOptions = append(o.APIOptions, apiOptions...)
	})
}

func sdkInvoke(ctx context.Context, c *lambda.Client, function string, payload []byte) error {
	out, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(function), InvocationType: types.InvocationTypeEvent, Payload: payload})
	if err == nil && out.StatusCode != http.StatusAccepted {
		err = errors.New("not 202")
	}
	return err
}

// InvokeAsync sends the request the SDK's client sends, with the same
// signature, for a name, a qualified name and an ARN.
func TestInvokeMatchesSDK(t *testing.T) {
	srv := awssigntest.NewCapture(t, accepted)
	cfg := awssigntest.Config()
	ctx := context.Background()
	functions := []string{"buzz-fanout", "buzz-fanout:live", "arn:aws:lambda:eu-west-2:123456789012:function:buzz-fanout", "arn:aws:lambda:eu-west-2:123456789012:function:buzz-fanout:$LATEST"}
	for _, base := range []string{srv.URL, srv.URL + "/"} {
		for _, fn := range functions {
			payload := []byte(`{"event":"` + fn + `","connections":["LmzSdfl8IAMCJqw="]}`)
			if err := sdkInvoke(ctx, sdkLambda(cfg, base, 2, awssigntest.WithoutTelemetry), fn, payload); err != nil {
				t.Fatalf("SDK invoke %s: %v", fn, err)
			}
			want := srv.Last(t)
			at := awssigntest.SignedAt(t, want)
			a := New(cfg, base, fn, 2)
			a.c.Now = func() time.Time { return at }
			if err := a.InvokeAsync(ctx, payload); err != nil {
				t.Fatalf("invoke %s: %v", fn, err)
			}
			got := srv.Last(t)
			if want.Header.Get("X-Amz-Invocation-Type") != "Event" {
				t.Fatalf("SDK request headers %v", want.Header)
			}
			awssigntest.SameRequest(t, want, got)
		}
	}
	a := New(cfg, srv.URL, "arn:aws:lambda:eu-west-2:123456789012:function:buzz-fanout", 1)
	if err := a.InvokeAsync(ctx, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Last(t).URI; got != "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aeu-west-2%3A123456789012%3Afunction%3Abuzz-fanout/invocations" {
		t.Errorf("path %q", got)
	}
}

// Without an endpoint the client calls the one the SDK resolves.
func TestDefaultEndpoint(t *testing.T) {
	for region, want := range map[string]string{
		"eu-west-2":  "https://lambda.eu-west-2.amazonaws.com",
		"cn-north-1": "https://lambda.cn-north-1.amazonaws.com.cn",
	} {
		cfg := awssigntest.Config()
		cfg.Region = region
		if got := defaultEndpoint(cfg); got != want {
			t.Errorf("%s: %q, want %q", region, got, want)
		}
	}
	cfg := awssigntest.Config()
	cfg.BaseEndpoint = aws.String("http://127.0.0.1:9001")
	if got := defaultEndpoint(cfg); got != "http://127.0.0.1:9001" {
		t.Errorf("base endpoint: %q", got)
	}
}

// 202 is success, another 2xx an error; throttling and 5xx are retried.
func TestInvokeStatuses(t *testing.T) {
	const fn = "buzz-fanout"
	fast := awssign.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond}
	tests := []struct {
		name     string
		respond  func(n int) awssigntest.Response
		requests int
		wantErr  string // "" for none
	}{
		{"202", accepted, 1, ""},
		{"200", func(int) awssigntest.Response { return awssigntest.Response{Status: 200} }, 1, "lambdainvoke: invoke buzz-fanout: status 200, want 202"},
		{"404", func(int) awssigntest.Response {
			return awssigntest.Response{Status: 404, Code: "ResourceNotFoundException", Body: `{"Type":"User","message":"Function not found: arn:aws:lambda:eu-west-2:123456789012:function:buzz-fanout"}`}
		}, 1, "lambdainvoke: invoke buzz-fanout: status 404 ResourceNotFoundException: Function not found: arn:aws:lambda:eu-west-2:123456789012:function:buzz-fanout"},
		{"429 then 202", func(n int) awssigntest.Response {
			if n == 0 {
				return awssigntest.Response{Status: 429, Code: "TooManyRequestsException", Body: `{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded","Type":"User","message":"Rate Exceeded."}`}
			}
			return awssigntest.Response{Status: 202}
		}, 2, ""},
		{"500 three times", func(int) awssigntest.Response {
			return awssigntest.Response{Status: 500, Code: "ServiceException", Body: `{"Type":"Service","message":"boom"}`}
		}, 3,
			"lambdainvoke: invoke buzz-fanout: status 500 ServiceException: boom (after 3 attempts)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := awssigntest.NewCapture(t, tc.respond)
			a := New(awssigntest.Config(), srv.URL, fn, 2)
			a.c.Retry = fast
			err := a.InvokeAsync(context.Background(), []byte(`{}`))
			if got := ""; err != nil {
				got = err.Error()
				if got != tc.wantErr {
					t.Errorf("error %q, want %q", got, tc.wantErr)
				}
			} else if tc.wantErr != "" {
				t.Errorf("no error, want %q", tc.wantErr)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
	t.Run("ctx cancelled during backoff", func(t *testing.T) {
		srv := awssigntest.NewCapture(t, func(int) awssigntest.Response {
			return awssigntest.Response{Status: 429, Code: "TooManyRequestsException", Body: `{"message":"Rate Exceeded."}`}
		})
		a := New(awssigntest.Config(), srv.URL, fn, 2)
		a.c.Retry = awssign.Retry{MaxAttempts: 3, BaseDelay: 20 * time.Second, MaxDelay: 20 * time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		if err := a.InvokeAsync(ctx, []byte(`{}`)); !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
			t.Errorf("error %v after %v", err, time.Since(start))
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// BenchmarkInvokeAsync compares the SDK's Invoke with InvokeAsync against
// one local server answering 202.
func BenchmarkInvokeAsync(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	cfg := awssigntest.Config()
	const fn = "arn:aws:lambda:eu-west-2:123456789012:function:buzz-fanout"
	payload := []byte(`{"event":"5c83da77af1dec6d7289834998ad7aafbd9e2191396d75ec3cc27f5a77226f36","part":3,"of":12}`)
	ctx := context.Background()
	b.Run("sdk", func(b *testing.B) {
		c := sdkLambda(cfg, srv.URL, 4)
		b.ReportAllocs()
		for b.Loop() {
			if err := sdkInvoke(ctx, c, fn, payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		a := New(cfg, srv.URL, fn, 4)
		b.ReportAllocs()
		for b.Loop() {
			if err := a.InvokeAsync(ctx, payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}
