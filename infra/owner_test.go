package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// `make deploy OWNER=npub1...` reaches the migrate custom resource's
// properties as the key in hex (what migrate makes the default
// community's first operator); without an owner the property is absent,
// and a key that is no key fails the synth instead of the deploy.
func TestOwnerReachesMigrateProperties(t *testing.T) {
	const hex = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
	npub, err := nip19.EncodePublicKey(hex)
	if err != nil {
		t.Fatal(err)
	}
	migrateProps := func(s synthesized) map[string]any {
		t.Helper()
		rs := s.ofType(MigrateResourceType)
		if len(rs) != 1 {
			t.Fatalf("%d migrate custom resources, want 1", len(rs))
		}
		for _, r := range rs {
			return r.Properties
		}
		return nil
	}
	if got := migrateProps(synth(t, map[string]any{"owner": npub}))[lambdas.PropOwner]; got != hex {
		t.Errorf("Owner property %v, want %s", got, hex)
	}
	if got, ok := migrateProps(defaultStack(t))[lambdas.PropOwner]; ok {
		t.Errorf("Owner property %v without an owner, want none", got)
	}
	for _, bad := range []string{"nsec1" + strings.Repeat("q", 58), hex[:60], "alice"} {
		ctx := cdkContext(t, map[string]any{"owner": bad, "assetDir": assetDir(t)})
		app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
		if _, err := SettingsFrom(app.Node()); err == nil || !strings.Contains(err.Error(), "context owner") {
			t.Errorf("owner %q: %v, want a context owner error", bad, err)
		}
	}
}
