package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// TestFail: the bridge's one error table, from each kind of error to its
// status, JSON body and Retry-After.
func TestFail(t *testing.T) {
	b := &Bridge{Log: testkit.Quiet()}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		text   string // body's error prefix
		retry  string
	}{
		{"invalid", reject.Invalidf("bad filter"), http.StatusBadRequest, "invalid: bad filter", ""},
		{"restricted, wrapped", fmt.Errorf("relay: publish: %w", reject.Restrictedf("no")), http.StatusForbidden, "restricted: no", ""},
		{"auth-required", reject.New(reject.AuthRequired, "token"), http.StatusUnauthorized, "auth-required: token", ""},
		{"rate-limited", &ratelimit.Exceeded{Err: reject.New(reject.RateLimited, "slow down"), RetryAfter: 1500 * time.Millisecond},
			http.StatusTooManyRequests, "rate-limited: slow down", "2"},
		{"no route", because(errNoRoute, reject.Invalidf("no route for GET /x")), http.StatusNotFound, "invalid: no route", ""},
		{"unknown host", unresolved(community.ErrUnknownHost), http.StatusNotFound, "invalid: no community is served", ""},
		{"too large", because(errTooLarge, reject.Invalidf("big")), http.StatusRequestEntityTooLarge, "invalid: big", ""},
		{"unexpected", errors.New("boom: secret detail"), http.StatusServiceUnavailable, reject.Opaque, ""},
		{"a bare sentinel is no refusal", errNoRoute, http.StatusServiceUnavailable, reject.Opaque, ""},
	} {
		r := b.Fail(context.Background(), "test", tc.err)
		var body map[string]string
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("%s: body %s: %v", tc.name, r.Body, err)
		}
		if r.Status != tc.status || !strings.HasPrefix(body["error"], tc.text) || r.Headers["retry-after"] != tc.retry {
			t.Errorf("%s: %d %q retry-after %q, want %d %q… %q", tc.name, r.Status, body["error"], r.Headers["retry-after"], tc.status, tc.text, tc.retry)
		}
	}
}
