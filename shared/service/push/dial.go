package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/push"
)

// The HTTP side of a try runs apart from the sender: the sender (in the
// VPC, beside the database) claims a delivery, builds its request (the
// callback body, or the wake and its NIP-98 header signed with the relay
// key) and hands it to a Dialer; the dialer (functions/push-dialer, outside
// the VPC, no database, no key) makes the one request and answers what came
// back. The claim, the rates and the outcome stay with the sender, so the
// dialer needs nothing but the request.

// DialRequest is one POST a dialer makes: a callback or a wake, its
// application/json body and, for a wake, its NIP-98 Authorization header.
type DialRequest struct {
	URL           string `json:"url"`
	Body          []byte `json:"body"`
	Authorization string `json:"authorization,omitempty"`
	// NotAfter (Unix milliseconds, 0: none) is when the sender stops
	// waiting: the dialer makes no request that could outlast it (one
	// that waited for an instance, or a cold start, too long is not made
	// at all), so a request the sender gave up on is never sent after,
	// and sent again by the retry.
	NotAfter int64 `json:"notAfter,omitempty"`
}

// DialAnswer is what one request came to: the status and at most
// dialAnswerMax bytes of the body, or, when no answer came (a refused
// address, a timeout, a reset), Error.
type DialAnswer struct {
	Status int    `json:"status,omitempty"`
	Body   []byte `json:"body,omitempty"`
	Error  string `json:"error,omitempty"`
	// Private: the address was refused by the callback policy
	// (netpolicy.PublicAddr at dial).
	Private bool `json:"private,omitempty"`
}

// dialAnswerMax bounds the answer body a dialer reads.
const dialAnswerMax = 4 << 10

// Dialer makes one request for the sender. An error is the hop's (the
// dialer could not be asked or did not answer), not the request's.
type Dialer interface {
	Dial(ctx context.Context, r DialRequest) (DialAnswer, error)
}

// Caller invokes a function synchronously and returns its answer (Lambda
// Invoke, InvocationType RequestResponse: shared/aws/lambdainvoke.Sync;
// the emulator's Invoke API locally). A function error is an error.
type Caller interface {
	Call(ctx context.Context, payload []byte) ([]byte, error)
}

// Direct is the dialer itself: it makes the request with Client (NewClient's,
// whose dialer refuses every non-public address after resolution) within
// push.RequestTimeout. functions/push-dialer serves it; a sender without a
// dialer function (tests) uses it in process.
type Direct struct{ Client *http.Client }

// Dial makes r.
func (d Direct) Dial(ctx context.Context, r DialRequest) (DialAnswer, error) {
	u := strings.ToLower(r.URL)
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return DialAnswer{Error: "not an http(s) URL"}, nil
	}
	if r.NotAfter != 0 && time.Until(time.UnixMilli(r.NotAfter)) < push.RequestTimeout {
		return DialAnswer{Error: "too late: the sender stops waiting before the request's deadline; not sent"}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, push.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, strings.NewReader(string(r.Body)))
	if err != nil {
		return DialAnswer{Error: fmt.Sprintf("URL: %v", err)}, nil
	}
	req.Header.Set("Content-Type", "application/json")
	if r.Authorization != "" {
		req.Header.Set("Authorization", r.Authorization)
	}
	c := d.Client
	if c == nil {
		c = NewClient(push.Policy{})
	}
	resp, err := c.Do(req)
	if err != nil {
		return DialAnswer{Error: err.Error(), Private: errors.Is(err, errPrivate)}, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, dialAnswerMax))
	return DialAnswer{Status: resp.StatusCode, Body: b}, nil
}

// Handler is functions/push-dialer's handler.
func (d Direct) Handler() func(context.Context, DialRequest) (DialAnswer, error) {
	return d.Dial
}

// Remote asks the dialer function through Call (the sender's side).
type Remote struct{ Call Caller }

// dialHop is what the hop to the dialer may add to a request's own
// deadline (push.RequestTimeout) when the caller sets none: an Invoke's
// round trip and a cold start of the dialer.
const dialHop = 3 * time.Second

// answerMargin is the time the dialer's answer has to come back after the
// last moment a request of it may end (DialRequest.NotAfter).
const answerMargin = time.Second

// Dial invokes the dialer with r and decodes its answer. The dialer makes
// no request that could end after ctx's deadline less answerMargin
// (NotAfter), so when the sender stops waiting no request is left running.
func (rm Remote) Dial(ctx context.Context, r DialRequest) (DialAnswer, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(push.RequestTimeout + dialHop)
	}
	r.NotAfter = dl.Add(-answerMargin).UnixMilli()
	payload, err := json.Marshal(r)
	if err != nil {
		return DialAnswer{}, fmt.Errorf("push: encode dial: %w", err)
	}
	ctx, cancel := context.WithDeadline(ctx, dl)
	defer cancel()
	out, err := rm.Call.Call(ctx, payload)
	if err != nil {
		return DialAnswer{}, fmt.Errorf("push: dialer: %w", err)
	}
	var a DialAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		return DialAnswer{}, fmt.Errorf("push: dialer answered %.100q: %w", out, err)
	}
	return a, nil
}

// dial sends r through the service's dialer (Direct over s.Client when
// none is set) and returns the status and body, or the failure.
func (s *Service) dial(ctx context.Context, r DialRequest) (int, []byte, error) {
	d := s.Dialer
	if d == nil {
		c := s.Client
		if c == nil {
			c = NewClient(s.Policy)
		}
		d = Direct{Client: c}
	}
	a, err := d.Dial(ctx, r)
	switch {
	case err != nil:
		return 0, nil, err
	case a.Private:
		return 0, nil, fmt.Errorf("%w: %s", errPrivate, a.Error)
	case a.Error != "":
		return 0, nil, errors.New(a.Error)
	}
	return a.Status, a.Body, nil
}
