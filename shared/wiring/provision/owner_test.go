package provision

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// The owner named at deploy (the migrate custom resource's Owner
// property, an npub here) is the default community's first operator; a
// later deploy naming another key changes nothing once the community has
// operators (they change through NIP-86); a property that is no key fails
// the run and adds no operator.
func TestDeployOwnerBecomesTheFirstOperatorOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k := testkit.KMSClient(testkit.StartKMS(t))
	dsn := testkit.NewDatabase(t)
	p := provisioner(t, k, dsn, "owned.example")
	operators := func() []string {
		t.Helper()
		st, err := store.Open(ctx, dsn, store.Options{MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		c, err := st.CommunitiesGet(ctx, "owned.example")
		if errors.Is(err, records.ErrNotFound) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return c.Operators
	}
	props := func(owner string) map[string]any { return map[string]any{lambdas.PropOwner: owner} }

	if _, err := p.Handle(ctx, Event{RequestType: "Create", ResourceProperties: props("nsec1notakey")}); err == nil ||
		!strings.Contains(err.Error(), "Owner") {
		t.Fatalf("a bad owner: %v, want the run to fail naming the property", err)
	}
	if ops := operators(); len(ops) != 0 {
		t.Fatalf("a bad owner left operators %v", ops)
	}

	const first = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
	npub, _ := nip19.EncodePublicKey(first)
	if _, err := p.Handle(ctx, Event{RequestType: "Create", ResourceProperties: props(npub)}); err != nil {
		t.Fatal(err)
	}
	if ops := operators(); len(ops) != 1 || ops[0] != first {
		t.Fatalf("operators %v after the first deploy, want [%s]", ops, first)
	}
	other := strings.Repeat("ab", 32)
	if _, err := p.Handle(ctx, Event{RequestType: "Update", ResourceProperties: props(other)}); err != nil {
		t.Fatal(err)
	}
	if ops := operators(); len(ops) != 1 || ops[0] != first {
		t.Fatalf("a redeploy with another owner changed the operators to %v", ops)
	}
	if _, err := p.Handle(ctx, Event{RequestType: "Update"}); err != nil {
		t.Fatal(err)
	}
	if ops := operators(); len(ops) != 1 || ops[0] != first {
		t.Fatalf("a redeploy without an owner changed the operators to %v", ops)
	}
}
