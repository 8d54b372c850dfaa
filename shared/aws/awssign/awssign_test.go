package awssign

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/encoding/httpbinding"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Label escapes every byte as the SDK's REST serializers escape a label.
func TestLabelMatchesSmithy(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
		if got, want := Label(string([]byte{byte(c)})), httpbinding.EscapePath(string([]byte{byte(c)}), true); got != want {
			t.Errorf("byte %#x: %q, want %q", c, got, want)
		}
	}
	for _, s := range []string{string(all), "LmzSdfl8IAMCJqw=", "a+b/c==", "plain", "", "arn:aws:lambda:eu-west-2:1:function:f", "é ü"} {
		if got, want := Label(s), httpbinding.EscapePath(s, true); got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}

// Endpoint.URL joins paths as smithy-go's JoinPath does.
func TestEndpointURL(t *testing.T) {
	for _, base := range []string{"", "/", "/prod", "/prod/", "/a/b"} {
		for _, p := range []string{"/@connections/x", "@connections/x", "/"} {
			if got, want := joinPath(base, p), smithyhttp.JoinPath(base, p); got != want {
				t.Errorf("join(%q, %q) = %q, want %q", base, p, got, want)
			}
		}
	}
	e, err := ParseEndpoint("https://abc.execute-api.eu-west-2.amazonaws.com/prod")
	if err != nil {
		t.Fatal(err)
	}
	u := e.URL("/@connections/", "a+b/c=", "")
	if u.Path != "/prod/@connections/a+b/c=" || u.RawPath != "/prod/@connections/a%2Bb%2Fc%3D" || u.EscapedPath() != u.RawPath || u.Host != "abc.execute-api.eu-west-2.amazonaws.com" {
		t.Errorf("URL %#v", u)
	}
	for _, bad := range []string{"", "abc", "ftp://x/y", "http://", "://"} {
		if _, err := ParseEndpoint(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestStatusError(t *testing.T) {
	h := http.Header{}
	h.Set("X-Amzn-Errortype", "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.awsgirlambda/")
	e := newStatusError(404, h, []byte(`{"Type":"User","message":"Function not found"}`))
	if e.Error() != "status 404 ResourceNotFoundException: Function not found" {
		t.Errorf("%q", e.Error())
	}
	e = newStatusError(400, http.Header{}, []byte(`{"__type":"com.amazon.coral#BadRequestException","Message":"bad"}`))
	if e.Error() != "status 400 BadRequestException: bad" {
		t.Errorf("%q", e.Error())
	}
	long := strings.Repeat("x", 1000)
	if got := Excerpt([]byte(" a\x00\n\tb " + long)); !strings.HasPrefix(got, "a b xxx") || !strings.HasSuffix(got, "…") || len(got) > maxExcerpt+len("…") {
		t.Errorf("excerpt %q (%d)", got, len(got))
	}
	if got := Excerpt(nil); got != "" {
		t.Errorf("empty: %q", got)
	}
}

func TestRetryDelay(t *testing.T) {
	r := Retry{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond}
	for i := 0; i < 100; i++ {
		for n, bound := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 300 * time.Millisecond, 9: 300 * time.Millisecond} {
			if d := r.delay(n); d < bound/2 || d >= bound {
				t.Fatalf("retry %d: %v, want in [%v, %v)", n, d, bound/2, bound)
			}
		}
	}
}

// A dropped connection is retried; anonymous credentials send unsigned
// requests; no credentials at all is an error, not an unsigned request.
func TestTransportErrorAndCredentials(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
			return
		}
		if r.Header.Get("Authorization") != "" {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	e, _ := ParseEndpoint(srv.URL)
	req := &Request{Method: http.MethodPost, URL: e.URL("/x/", "y", ""), Body: []byte("z")}

	c := New(aws.Config{Region: "eu-west-2", Credentials: aws.AnonymousCredentials{}}, "execute-api", 1)
	c.Retry.BaseDelay = time.Millisecond
	if status, err := c.Do(context.Background(), req); err != nil || status != 200 || n.Load() != 2 {
		t.Errorf("status %d, error %v after %d requests", status, err, n.Load())
	}

	c = New(aws.Config{Region: "eu-west-2"}, "execute-api", 1)
	if _, err := c.Do(context.Background(), req); err == nil || n.Load() != 2 {
		t.Errorf("no credentials: %v after %d requests", err, n.Load())
	}

	failing := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return aws.Credentials{}, errors.New("no role") })
	c = New(aws.Config{Region: "eu-west-2", Credentials: failing}, "execute-api", 1)
	if _, err := c.Do(context.Background(), req); err == nil || !strings.Contains(err.Error(), "no role") || n.Load() != 2 {
		t.Errorf("failing credentials: %v", err)
	}
}
