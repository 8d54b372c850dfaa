// Package awssign makes SigV4-signed HTTP calls to AWS REST APIs without
// the SDK's per-operation middleware stack: build the request, sign it with
// the SDK's standalone signer (aws/signer/v4), send it on a pooled
// http.Client and retry throttling and server errors with jittered
// exponential backoff. It is for the relay's hot paths, the @connections
// API (shared/transport/apigw) and asynchronous Lambda Invoke (shared/aws/lambdainvoke),
// where the SDK's stack cost most of the CPU of a call.
//
// Requests are built as the SDK's own REST clients build them (path labels
// escaped by Label, joined to the endpoint's path by Endpoint.URL, the body's
// Content-Type set only with a body) so that their canonical request, and
// so their signature, is the one the SDK would compute.
package awssign

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// emptyPayloadHash is the hex SHA-256 of an empty body.
const emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// userAgent is sent on every request (it is not signed).
const userAgent = "buzzrelay-awssign/1"

// Retry is the retry policy of a Client: a throttled (429) or failed (5xx)
// response, or a transport error other than the context's, is retried after
// a delay drawn uniformly from [d/2, d), d = BaseDelay·2^(retry-1) capped at
// MaxDelay, until MaxAttempts attempts in all were made.
type Retry struct {
	// MaxAttempts is the number of attempts in all, the first included
	// (the SDK's standard retryer makes 3). Below 1 is 1.
	MaxAttempts int
	// BaseDelay is the delay bound before the first retry.
	BaseDelay time.Duration
	// MaxDelay caps the delay bound.
	MaxDelay time.Duration
}

// DefaultRetry is the policy New gives a Client: 3 attempts, the retries
// after 50–100 ms and 100–200 ms.
var DefaultRetry = Retry{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}

// delay is the wait before retry n (1 is the first retry).
func (r Retry) delay(n int) time.Duration {
	d := r.BaseDelay
	for i := 1; i < n && d < r.MaxDelay; i++ {
		d *= 2
	}
	if r.MaxDelay > 0 && d > r.MaxDelay {
		d = r.MaxDelay
	}
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half)
}

// Client signs and sends requests to one AWS service. It is safe for
// concurrent use.
type Client struct {
	// HTTP sends the requests; New gives it a Transport from NewTransport.
	HTTP *http.Client
	// Retry is the retry policy, DefaultRetry from New.
	Retry Retry
	// Now is the signing clock, time.Now when nil. Tests set it to compare
	// signatures with the SDK's.
	Now func() time.Time

	creds   aws.CredentialsProvider // nil: no credentials configured
	anon    bool                    // aws.AnonymousCredentials: send unsigned
	signer  *v4.Signer
	service string
	region  string
}

// New builds a Client signing for service (the SigV4 signing name, e.g.
// "execute-api", "lambda") in cfg.Region with cfg.Credentials (wrapped in
// an aws.CredentialsCache unless it is one). maxConns sizes the idle
// connection pool (see NewTransport).
func New(cfg aws.Config, service string, maxConns int) *Client {
	c := &Client{
		HTTP:    NewHTTPClient(maxConns),
		Retry:   DefaultRetry,
		signer:  v4.NewSigner(),
		service: service,
		region:  cfg.Region,
	}
	switch p := cfg.Credentials; {
	case p == nil:
	case aws.IsCredentialsProvider(p, aws.AnonymousCredentials{}):
		c.anon = true
	default:
		if _, cached := p.(*aws.CredentialsCache); !cached {
			p = aws.NewCredentialsCache(p)
		}
		c.creds = p
	}
	return c
}

// Request is one call. The Client does not modify it: it may be shared by
// concurrent calls.
type Request struct {
	// Method is the HTTP method.
	Method string
	// URL is the full request URL, its Path and RawPath as Endpoint.URL
	// builds them.
	URL *url.URL
	// ContentType is the body's media type, sent only with a non-empty
	// body (as the SDK's REST serializers do).
	ContentType string
	// Header holds further headers to sign and send (e.g.
	// X-Amz-Invocation-Type). Nil is none.
	Header http.Header
	// Body is the payload, nil or empty for none.
	Body []byte
}

// Do signs and sends r, retrying per c.Retry, and answers the final
// response's status. A 2xx status has a nil error; any other is a
// *StatusError. A transport or credentials error is returned as it is,
// annotated with the attempts made; when ctx ends while waiting to retry,
// the error wraps both the last failure and ctx.Err().
func (c *Client) Do(ctx context.Context, r *Request) (int, error) {
	hash := emptyPayloadHash
	if len(r.Body) > 0 {
		sum := sha256.Sum256(r.Body)
		hash = hex.EncodeToString(sum[:])
	}
	attempts := max(c.Retry.MaxAttempts, 1)
	for attempt := 1; ; attempt++ {
		status, retry, err := c.once(ctx, r, hash)
		if err == nil {
			return status, nil
		}
		if !retry || attempt >= attempts {
			return status, annotate(err, attempt)
		}
		d := c.Retry.delay(attempt)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			// Waiting would outlive the caller: give up now.
			return status, fmt.Errorf("%w; no time left to retry: %w", annotate(err, attempt), context.DeadlineExceeded)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return status, fmt.Errorf("%w; retry abandoned: %w", annotate(err, attempt), ctx.Err())
		case <-t.C:
		}
	}
}

// annotate records on err how many attempts were made.
func annotate(err error, attempts int) error {
	var se *StatusError
	if errors.As(err, &se) {
		se.Attempts = attempts
		return err
	}
	if attempts > 1 {
		return fmt.Errorf("%w (after %d attempts)", err, attempts)
	}
	return err
}

// once makes one attempt, answering whether a failure may be retried.
func (c *Client) once(ctx context.Context, r *Request, payloadHash string) (status int, retry bool, err error) {
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	// An empty URL here, the prepared one below: it is copied because the
	// signer rewrites URL.RawQuery.
	req, err := http.NewRequestWithContext(ctx, r.Method, "", body)
	if err != nil {
		return 0, false, err
	}
	u := *r.URL
	req.URL, req.Host = &u, u.Host
	for k, v := range r.Header {
		req.Header[k] = v
	}
	if len(r.Body) > 0 && r.ContentType != "" {
		req.Header["Content-Type"] = []string{r.ContentType}
	}
	req.Header["User-Agent"] = []string{userAgent}
	switch {
	case c.anon:
	case c.creds == nil:
		return 0, false, errors.New("awssign: no AWS credentials configured")
	default:
		creds, err := c.creds.Retrieve(ctx)
		if err != nil {
			return 0, false, fmt.Errorf("awssign: retrieve credentials: %w", err)
		}
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		if err := c.signer.SignHTTP(ctx, creds, req, payloadHash, c.service, c.region, now()); err != nil {
			return 0, false, fmt.Errorf("awssign: sign: %w", err)
		}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// Connection failures (a reset idle connection, a timeout) are
		// retried, as the SDK's retryer does; the caller's own end is not.
		return 0, ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// Drain what is left so the connection goes back to the pool.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
		return resp.StatusCode, false, nil
	}
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, drainLimit))
	se := newStatusError(resp.StatusCode, resp.Header, excerpt)
	return resp.StatusCode, resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500, se
}

// drainLimit bounds how much of a response body is read.
const drainLimit = 16 << 10
