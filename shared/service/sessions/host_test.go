package sessions_test

import (
	"context"
	"testing"
)

// TestForgottenHostAsksTheDatabaseAgain: a host's community is named to
// new connections from the sessions' S3 state (the hostname's entry, the
// port aside, as communities are registered) until the door forgets it,
// on finding that community no longer served; the next new connection
// there asks the database again.
func TestForgottenHostAsksTheDatabaseAgain(t *testing.T) {
	ctx := context.Background()
	d, other := localIdle(t, 0)
	asked := 0
	resolve := func(context.Context, string) (string, error) { asked++; return "bees", nil }
	for _, host := range []string{"b.test:8080", "b.test"} {
		if c, err := d.Community(ctx, host, resolve); err != nil || c != "bees" {
			t.Fatalf("%s: %q %v", host, c, err)
		}
	}
	if asked != 1 {
		t.Fatalf("the database was asked %d times, want once", asked)
	}
	if err := other().ForgetHost(ctx, "b.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Community(ctx, "b.test:8080", resolve); err != nil || asked != 2 {
		t.Fatalf("after ForgetHost: %v, asked %d times, want twice", err, asked)
	}
}
