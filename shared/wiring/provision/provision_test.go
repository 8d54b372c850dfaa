package provision

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/migrations"
	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

var quiet = testkit.Quiet()

func randomName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func provisioner(t *testing.T, k KMS, dsn, community string) *Provisioner {
	return &Provisioner{Community: community, KeyID: testkit.KMSKeyARN, KMS: k, Log: quiet,
		DSN: func(context.Context) (string, error) { return dsn, nil }}
}

func stored(t *testing.T, dsn, community string) (ct []byte, pub string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `SELECT relay_key_ciphertext, relay_pubkey FROM communities WHERE id = $1`, community).Scan(&ct, &pub); err != nil {
		t.Fatal(err)
	}
	return ct, pub
}

// The trigger creates the community's relay key on the first run, keeps it
// on every later one, answers it as the resource's attributes, and Delete
// leaves it alone.
func TestRelayKeyCreatedOnceAndKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k := testkit.KMSClient(testkit.StartKMS(t))
	dsn := testkit.NewDatabase(t)
	p := provisioner(t, k, dsn, "buzz.example")

	first, err := p.Handle(ctx, Event{}) // a manual run: Create
	if err != nil {
		t.Fatal(err)
	}
	if first.PhysicalResourceID != "buzz-migrate-buzz.example" || first.Data[AttrVersion] != latestVersion(t) {
		t.Fatalf("first run: %+v", first)
	}
	ct, err := kmssigner.DecodeCiphertext(first.Data[AttrRelayKeyCiphertext])
	if err != nil {
		t.Fatal(err)
	}
	sk, err := kmssigner.Load(ctx, k, ct, testkit.KMSKeyARN, "buzz.example")
	if err != nil {
		t.Fatalf("the answered ciphertext does not decrypt for the community: %v", err)
	}
	if sk.PublicKey() != first.Data[AttrRelayPubkey] {
		t.Fatalf("pubkey %s, ciphertext holds %s", first.Data[AttrRelayPubkey], sk.PublicKey())
	}
	dbCT, dbPub := stored(t, dsn, "buzz.example")
	if kmssigner.EncodeCiphertext(dbCT) != first.Data[AttrRelayKeyCiphertext] || dbPub != first.Data[AttrRelayPubkey] {
		t.Fatal("the community row does not hold the answered key")
	}

	for _, typ := range []string{"Update", "Create"} {
		again, err := p.Handle(ctx, Event{RequestType: typ, PhysicalResourceID: first.PhysicalResourceID})
		if err != nil {
			t.Fatal(err)
		}
		if again.Data[AttrRelayPubkey] != first.Data[AttrRelayPubkey] || again.Data[AttrRelayKeyCiphertext] != first.Data[AttrRelayKeyCiphertext] {
			t.Fatalf("%s replaced the relay key: %s -> %s", typ, first.Data[AttrRelayPubkey], again.Data[AttrRelayPubkey])
		}
	}
	del, err := p.Handle(ctx, Event{RequestType: "Delete", PhysicalResourceID: first.PhysicalResourceID})
	if err != nil || del.PhysicalResourceID != first.PhysicalResourceID {
		t.Fatalf("delete: %+v %v", del, err)
	}
	if _, pub := stored(t, dsn, "buzz.example"); pub != first.Data[AttrRelayPubkey] {
		t.Fatal("delete changed the stored key")
	}

	// A manual rotation replaces it, once; later runs keep the new one.
	if _, err := p.Handle(ctx, Event{RequestType: "Update", RotateRelayKey: true}); err == nil {
		t.Fatal("a CloudFormation request rotated the key")
	}
	rotated, err := p.Handle(ctx, Event{RotateRelayKey: true})
	if err != nil || rotated.Data[AttrRelayPubkey] == first.Data[AttrRelayPubkey] {
		t.Fatalf("rotation: %v, pubkey %s", err, rotated.Data[AttrRelayPubkey])
	}
	if kept, err := p.Handle(ctx, Event{RequestType: "Update"}); err != nil || kept.Data[AttrRelayPubkey] != rotated.Data[AttrRelayPubkey] {
		t.Fatalf("after rotation: %v, pubkey %s", err, kept.Data[AttrRelayPubkey])
	}
	first = rotated

	// The functions' signer loads the answered ciphertext as the stack passes it.
	testkit.IsolateKMS(t, *k.Options().BaseEndpoint)
	cfg, err := config.Load(func(key string) string {
		return map[string]string{"RELAY_SIGNER": "kms", "RELAY_KEY_CIPHERTEXT": first.Data[AttrRelayKeyCiphertext],
			"RELAY_KMS_KEY_ID": testkit.KMSKeyARN, "BUZZ_COMMUNITY": "buzz.example", "AWS_REGION": testkit.KMSRegion}[key]
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Signer(ctx)
	if err != nil || s.PublicKey() != first.Data[AttrRelayPubkey] {
		t.Fatalf("functions' signer: %v", err)
	}
}

// An existing ciphertext (RELAY_KEY_CIPHERTEXT) is adopted, not replaced by a
// random key; a stored key the configured KMS key cannot open fails the
// deploy with the reason and is left in place.
func TestImportAndUndecryptableKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k := testkit.KMSClient(testkit.StartKMS(t))
	dsn := testkit.NewDatabase(t)
	secret, _ := kmssigner.NewSecret()
	want, _ := kmssigner.PublicKey(secret)
	ct, err := kmssigner.Seal(ctx, k, testkit.KMSKeyARN, "default", secret)
	if err != nil {
		t.Fatal(err)
	}
	p := provisioner(t, k, dsn, "default")
	p.Import = kmssigner.EncodeCiphertext(ct)
	out, err := p.Handle(ctx, Event{RequestType: "Create"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Data[AttrRelayPubkey] != want {
		t.Fatalf("imported key: pubkey %s, want %s", out.Data[AttrRelayPubkey], want)
	}

	// A ciphertext bound to another community cannot be imported.
	other := provisioner(t, k, testkit.NewDatabase(t), "other")
	other.Import = kmssigner.EncodeCiphertext(ct)
	if _, err := other.Handle(ctx, Event{RequestType: "Create"}); err == nil || !strings.Contains(err.Error(), "RELAY_KEY_CIPHERTEXT") {
		t.Fatalf("import for another community: %v", err)
	}

	// The stored key of "default" under another community name in the row's
	// place: decrypting fails, the deploy fails, nothing is replaced.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO communities (id, relay_key_ciphertext, relay_pubkey) VALUES ('moved', $1, $2)`, ct, want); err != nil {
		t.Fatal(err)
	}
	moved := provisioner(t, k, dsn, "moved")
	if _, err := moved.Handle(ctx, Event{RequestType: "Update"}); err == nil || !strings.Contains(err.Error(), "never replaced") {
		t.Fatalf("undecryptable stored key: %v", err)
	}
	if _, pub := stored(t, dsn, "moved"); pub != want {
		t.Fatal("the undecryptable key was replaced")
	}
}

func TestMisconfigurationFailsClearly(t *testing.T) {
	ctx := context.Background()
	load := func(env map[string]string) (*Provisioner, error) {
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return FromConfig(ctx, cfg, quiet)
	}
	if _, err := load(map[string]string{"DB_SECRET_ARN": "arn:x"}); err == nil || !strings.Contains(err.Error(), "RELAY_KMS_KEY_ID") {
		t.Fatalf("no KMS key: %v", err)
	}
	if _, err := load(map[string]string{"RELAY_KMS_KEY_ID": "alias/k", "DB_IAM_USER": "Buzz; DROP"}); err == nil || !strings.Contains(err.Error(), "DB_IAM_USER") {
		t.Fatalf("bad user: %v", err)
	}
	if _, err := load(map[string]string{"RELAY_KMS_KEY_ID": "alias/k", "RELAY_KEY_CIPHERTEXT": "%%"}); err == nil || !strings.Contains(err.Error(), "RELAY_KEY_CIPHERTEXT") {
		t.Fatalf("bad import: %v", err)
	}
	p := &Provisioner{Community: "c", Log: quiet}
	if _, err := p.Handle(ctx, Event{RequestType: "Replace"}); err == nil || !strings.Contains(err.Error(), "RequestType") {
		t.Fatalf("unknown request type: %v", err)
	}
	// Delete needs nothing configured: a failed stack always deletes.
	t.Setenv("BUZZ_COMMUNITY", "c")
	out, err := Handler(quiet)(ctx, Event{RequestType: "Delete"})
	if err != nil || out.PhysicalResourceID != "buzz-migrate-c" {
		t.Fatalf("delete without configuration: %+v %v", out, err)
	}
	// A Create with nothing configured fails with the reason.
	t.Setenv("RELAY_KMS_KEY_ID", "")
	if _, err := Handler(quiet)(ctx, Event{RequestType: "Create"}); err == nil || !strings.Contains(err.Error(), "RELAY_KMS_KEY_ID") {
		t.Fatalf("create without configuration: %v", err)
	}
}

// The IAM user gets LOGIN, rds_iam where that role exists, and exactly the
// privileges the request path needs: it can register a connection, record
// a NIP-98 token and store an event, on tables created before and after.
func TestIAMUserCanServeTheRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	user := randomName("buzz_relay_t")
	admin, err := pgx.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var hadIAMRole bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rds_iam')`).Scan(&hadIAMRole); err != nil {
		t.Fatal(err)
	}
	if !hadIAMRole { // stand in for Aurora's role
		// Another test process may create it at the same moment.
		if _, err := admin.Exec(ctx, `DO $$ BEGIN CREATE ROLE rds_iam NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // after the database is dropped (cleanups run last-in first-out)
		c, err := pgx.Connect(context.Background(), os.Getenv("DATABASE_URL"))
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+user)
	})
	dsn := testkit.NewDatabase(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	owner, err := store.Open(ctx, dsn, store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	for range 2 { // idempotent
		if err := EnsureIAMUser(ctx, owner, user); err != nil {
			t.Fatal(err)
		}
	}
	var member, login bool
	if err := conn.QueryRow(ctx, `SELECT pg_has_role($1, 'rds_iam', 'member'), rolcanlogin FROM pg_roles WHERE rolname = $1`, user).Scan(&member, &login); err != nil {
		t.Fatal(err)
	}
	if !member || !login {
		t.Fatalf("role %s: rds_iam member %v, login %v", user, member, login)
	}
	// A table a later migration creates is covered by the default privileges.
	if _, err := conn.Exec(ctx, `CREATE TABLE later_table (x int)`); err != nil {
		t.Fatal(err)
	}

	u, _ := url.Parse(dsn)
	u.User = url.User(user)
	st, err := store.Open(ctx, u.String(), store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := testkit.OpenDB(t, u.String()) // the relay user's own look at the tables
	if _, err := db.Exec(ctx, `INSERT INTO later_table VALUES (1)`); err != nil {
		t.Fatalf("later table: %v", err)
	}
	if _, err := st.NIP98SeenInsert(ctx, "default", strings.Repeat("ab", 31)+"00", time.Now().Unix()+60); err != nil {
		t.Fatalf("nip98: %v", err)
	}
	relayKey := testkit.RelayKey(t)
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	ev := &nostr.Event{Kind: 9007, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", uuid.NewString()}, {"name", "general"}}}
	_ = ev.Sign(sk)
	if out, err := ingest.New(st, relayKey).Submit(ctx, "default", pk, ev); err != nil || !out.Accepted {
		t.Fatalf("create channel as %s: %s (%v)", user, out.Message, err)
	}
	if _, err := db.Exec(ctx, `CREATE TABLE not_allowed (x int)`); err == nil {
		t.Fatal("the relay user may create tables")
	}
}

// latestVersion is the schema version once every migration is applied: the
// number of migration files (tern numbers them 001, 002, ... without gaps).
func latestVersion(t *testing.T) string {
	t.Helper()
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(len(files))
}
