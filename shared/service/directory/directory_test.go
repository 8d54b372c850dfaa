package directory_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/directory"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// setup is a database with the default community and a bucket; each
// instance() is another warm instance's directory over both.
func setup(t *testing.T) (context.Context, *store.Store, community.Sealer, func() *directory.Directory) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	st := testkit.NewStore(t, store.Options{MaxConns: 4})
	srv := s3local.ForTest(t, "media")
	bucket, err := s3blobs.Open(ctx, "", "media", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	sealer, err := community.NewLocalSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, st, sealer, func() *directory.Directory { return directory.New(bucket, "directory/", st, "default") }
}

// TestHostResolvedFromDocumentWithoutDatabase: once a community's
// documents are written, its host resolves (NIP-11's fields, its relay
// key) on any instance without a database statement, again and again.
func TestHostResolvedFromDocumentWithoutDatabase(t *testing.T) {
	ctx, st, s, instance := setup(t)
	writer, reader := instance(), instance()
	pub, err := community.Create(ctx, st, s, writer, community.Spec{ID: "bees", Hosts: []string{"b.example"}, Name: "Bees", About: "a hive"})
	if err != nil {
		t.Fatal(err)
	}
	before := st.Statements()
	for range 3 {
		c, err := reader.Resolve(ctx, "B.Example:443")
		if err != nil || c.ID != "bees" || c.Name != "Bees" || c.About != "a hive" || c.Pubkey("") != pub {
			t.Fatalf("b.example: %+v %v", c, err)
		}
	}
	if n := st.Statements() - before; n != 0 {
		t.Fatalf("3 lookups ran %d statements, want 0", n)
	}
}

// TestStaleDocumentAfterDisableNeverServed: an instance that read a
// community's document while it was served refuses it from its next
// lookup once another instance disabled it (the copy it keeps is
// revalidated against the bucket on every lookup), with the same refusal
// as an unknown host; enabled again, it is served again.
func TestStaleDocumentAfterDisableNeverServed(t *testing.T) {
	ctx, st, s, instance := setup(t)
	operator, reader := instance(), instance()
	if err := community.AddHost(ctx, st, "default", "a.example", operator); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, st, s, operator, community.Spec{ID: "bees", Hosts: []string{"b.example"}}); err != nil {
		t.Fatal(err)
	}
	if id, err := reader.ResolveID(ctx, "b.example"); err != nil || id != "bees" {
		t.Fatalf("before the disable: %q %v", id, err)
	}
	if err := community.Disable(ctx, st, "bees", operator); err != nil {
		t.Fatal(err)
	}
	before := st.Statements()
	_, errDisabled := reader.ResolveID(ctx, "b.example")
	if r, ok := reject.As(errDisabled); !ok || r.Prefix != reject.Restricted {
		t.Fatalf("after the disable: %v, want restricted:", errDisabled)
	}
	if err := reader.Admit(ctx, "b.example"); err == nil {
		t.Fatal("the upgrade to the disabled community admitted")
	}
	if c, err := reader.Lookup(ctx, "b.example"); err != nil || c.Served() {
		t.Fatalf("lookup after the disable: %+v %v, want the disabled document", c, err)
	}
	if n := st.Statements() - before; n != 0 {
		t.Fatalf("refusing the disabled community ran %d statements, want 0", n)
	}
	_, errUnknown := reader.ResolveID(ctx, "nowhere.example")
	if errUnknown == nil || errDisabled.Error() != strings.Replace(errUnknown.Error(), "nowhere.example", "b.example", 1) {
		t.Fatalf("unknown host: %v; disabled: %v (want the same words)", errUnknown, errDisabled)
	}
	if err := community.Enable(ctx, st, "bees", operator); err != nil {
		t.Fatal(err)
	}
	if id, err := reader.ResolveID(ctx, "b.example"); err != nil || id != "bees" {
		t.Fatalf("enabled again: %q %v", id, err)
	}
}

// TestFirstHostnameEndsDefaultForEveryHost: while no hostname is
// registered the default community serves every host (from its one
// document); the first hostname registered ends that on every instance,
// so a host served through the default before is unknown after.
func TestFirstHostnameEndsDefaultForEveryHost(t *testing.T) {
	ctx, st, s, instance := setup(t)
	operator, reader := instance(), instance()
	if id, err := reader.ResolveID(ctx, "anything.example"); err != nil || id != "default" {
		t.Fatalf("no hostname yet: %q %v", id, err)
	}
	before := st.Statements()
	if id, err := reader.ResolveID(ctx, "other.example"); err != nil || id != "default" {
		t.Fatalf("no hostname yet, another host: %q %v", id, err)
	}
	if n := st.Statements() - before; n != 0 {
		t.Fatalf("the default community's document read with %d statements, want 0", n)
	}
	if _, err := community.Create(ctx, st, s, operator, community.Spec{ID: "bees", Hosts: []string{"b.example"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.ResolveID(ctx, "anything.example"); err == nil {
		t.Fatal("a host no community registered is still served by the default community")
	}
	if id, err := reader.ResolveID(ctx, "b.example"); err != nil || id != "bees" {
		t.Fatalf("b.example: %q %v", id, err)
	}
}

// TestMissingDocumentWrittenFromDatabaseOnce: a community whose documents
// were never written (changed without the directory, or before it
// existed) is read from the database once, then from its document.
func TestMissingDocumentWrittenFromDatabaseOnce(t *testing.T) {
	ctx, st, s, instance := setup(t)
	if _, err := community.Create(ctx, st, s, nil, community.Spec{ID: "bees", Hosts: []string{"b.example"}, Name: "Bees"}); err != nil {
		t.Fatal(err)
	}
	d := instance()
	if c, err := d.Resolve(ctx, "b.example"); err != nil || c.Name != "Bees" {
		t.Fatalf("first lookup: %+v %v", c, err)
	}
	before := st.Statements()
	if c, err := instance().Resolve(ctx, "b.example"); err != nil || c.Name != "Bees" {
		t.Fatalf("second lookup: %+v %v", c, err)
	}
	if n := st.Statements() - before; n != 0 {
		t.Fatalf("the written document read with %d statements, want 0", n)
	}
}
