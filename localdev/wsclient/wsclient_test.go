package wsclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/localdev/wsclient"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// Login authenticates against the relay (a REQ then answers EOSE, not
// CLOSED auth-required:), and an AUTH naming another relay URL is refused.
func TestLogin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := e2e.StartTest(t, e2e.Options{Log: testkit.Quiet()})
	for _, c := range []struct {
		authURL string
		ok      bool
	}{{r.WSURL, true}, {"ws://elsewhere.example", false}} {
		conn, err := wsclient.Dial(ctx, r.WSURL)
		if err != nil {
			t.Fatal(err)
		}
		err = conn.Login(ctx, c.authURL, nostr.GeneratePrivateKey())
		if (err == nil) != c.ok {
			conn.Close()
			t.Fatalf("AUTH naming %s: %v", c.authURL, err)
		}
		if c.ok {
			if err := conn.Send(ctx, []any{"REQ", "s", map[string]any{"kinds": []int{9}, "limit": 1}}); err != nil {
				t.Fatal(err)
			}
			if p, err := conn.Next(ctx); err != nil || wsclient.Verb(p) != "EOSE" {
				t.Fatalf("REQ after login: %v %v", p, err)
			}
		}
		conn.Close()
	}
}
