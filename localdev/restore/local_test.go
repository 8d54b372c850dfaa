package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/provision"
)

// TestLocalRestoreKeepsDataAndRelayKey runs the restore's data steps on
// the local Postgres with the migrate function's own code and local-kms:
// the relay's database, provisioned as the first deploy provisions it
// (migrations, community, owner, relay key sealed under the stack's KMS
// key), is dumped (the snapshot), restored into a new database (the
// replacement cluster) and migrated there (the migrate resource on the new
// endpoint, an Update): every table's rows and the relay key are the
// original's, and migrate answers the same relay pubkey. Migrated with
// another KMS key (what a stack deployed after make destroy without
// -c relayKmsKey would hold), the copy's migrate fails, says why and
// leaves the stored key. What it cannot prove: CloudFormation's
// replacement, RDS's snapshot restore, IAM database auth on the copy and
// the time any of it takes (docs/deploy.md, "Backups and restore").
func TestLocalRestoreKeepsDataAndRelayKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := testkit.KMSClient(testkit.StartKMS(t))
	admin := testkit.AdminDSN(t)
	dsn := testkit.NewDatabase(t)
	owner := strings.Repeat("ab", 32)
	p := &provision.Provisioner{Community: "default", KeyID: testkit.KMSKeyARN, KMS: k, Log: testkit.Quiet(),
		DSN: func(context.Context) (string, error) { return dsn, nil }}
	first, err := p.Handle(ctx, provision.Event{RequestType: "Create", ResourceProperties: map[string]any{"Owner": owner}})
	if err != nil {
		t.Fatal(err)
	}
	pub := first.Data[provision.AttrRelayPubkey]

	restore := func(keyID string) (Report, provision.Response, error) {
		var b [4]byte
		_, _ = rand.Read(b[:])
		name := "restored_" + hex.EncodeToString(b[:])
		t.Cleanup(func() { _ = dbtest.DropDatabase(context.Background(), admin, name) })
		var answer provision.Response
		r, err := Local{AdminDSN: admin, DSN: dsn, Dir: t.TempDir(), Name: name,
			Migrate: func(ctx context.Context, copyDSN string) error {
				m := *p
				m.KeyID = keyID
				m.DSN = func(context.Context) (string, error) { return copyDSN, nil }
				var err error
				answer, err = m.Handle(ctx, provision.Event{RequestType: "Update", PhysicalResourceID: first.PhysicalResourceID})
				return err
			}}.Run(ctx)
		return r, answer, err
	}

	r, answer, err := restore(testkit.KMSKeyARN)
	if err != nil {
		t.Fatal(err)
	}
	if answer.Data[provision.AttrRelayPubkey] != pub || answer.Data[provision.AttrRelayKeyCiphertext] != first.Data[provision.AttrRelayKeyCiphertext] {
		t.Fatalf("migrate on the copy answered pubkey %s, want the original's %s", answer.Data[provision.AttrRelayPubkey], pub)
	}
	if r.Tables["communities"] == 0 || len(r.Tables) < 10 || !strings.HasPrefix(r.RelayKeys["default"], pub+":") {
		t.Fatalf("the original held %v, keys %v", r.Tables, r.RelayKeys)
	}
	t.Logf("restored %d tables, relay key %s kept", len(r.Tables), pub)

	// The stack's own new key instead of the retained one: the copy's
	// relay key cannot be opened, and migrate says so without replacing it.
	other, err := k.CreateKey(ctx, &kms.CreateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = restore(*other.KeyMetadata.Arn)
	if err == nil || !strings.Contains(err.Error(), "never replaced") {
		t.Fatalf("migrate with another KMS key on the restored database: %v, want the undecryptable-key failure", err)
	}
}
