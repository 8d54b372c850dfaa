package sessions_test

import (
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/service/sessions"
)

// TestConnectionExpiresOneLifetimeAfterConnect holds the one expiry rule
// (a row, a cached connection, a folded subscription's connection and the
// last-open marker all use it): API Gateway's two hours after connect.
func TestConnectionExpiresOneLifetimeAfterConnect(t *testing.T) {
	for _, at := range []int64{0, 1_800_000_000} {
		if got := sessions.ExpiresAt(at); got != at+int64((2*time.Hour)/time.Second) {
			t.Errorf("ExpiresAt(%d) = %d, want two hours later", at, got)
		}
	}
}
