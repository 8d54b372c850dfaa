package migrate_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/migrations"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/ingest"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// A rollback runs the previous release's migrator against a database a newer
// release already migrated: it must log that and succeed, changing nothing.
func TestDatabaseAheadOfMigrationsSucceeds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := testkit.NewDatabase(t)
	log := testkit.Quiet()
	r, err := migrate.Run(ctx, dsn, log)
	if err != nil || r.Ahead || r.Version != r.Known || r.Known < 5 {
		t.Fatalf("fresh database: %+v, %v", r, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ahead := r.Known + 2
	if _, err := conn.Exec(ctx, "UPDATE "+migrate.VersionTable+" SET version = $1", ahead); err != nil {
		t.Fatal(err)
	}
	r, err = migrate.Run(ctx, dsn, log)
	if err != nil {
		t.Fatalf("ahead database: %v", err)
	}
	if !r.Ahead || r.Version != ahead {
		t.Fatalf("ahead database: %+v, want Ahead at version %d", r, ahead)
	}
	if v, err := migrate.Up(ctx, dsn); err != nil || v != ahead {
		t.Fatalf("Up on an ahead database: %d, %v", v, err)
	}
	var v int32
	if err := conn.QueryRow(ctx, "SELECT version FROM "+migrate.VersionTable).Scan(&v); err != nil || v != ahead {
		t.Fatalf("version changed to %d (%v)", v, err)
	}
}

// Migration 014 hides the private channels Buzz's visibility tag made (they
// were private, restricted and closed, and hidden only as system channels):
// a channel whose flags were last set by visibility=private, by its 9007 or
// a 9002, or that has no flag-setting event stored, becomes hidden; a group
// whose flags were last set by NIP-29's own flag tags keeps them, private
// without hidden included (issue 36).
func TestBuzzPrivateChannelsHiddenByMigration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := testkit.NewDatabase(t)
	st, err := store.Open(ctx, dsn, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ing := ingest.New(st, testkit.RelayKey(t))
	owner := testkit.NewKey(t)
	at := time.Now().Add(-time.Minute)
	submit := func(ev *nostr.Event) {
		t.Helper()
		out, err := ing.Submit(ctx, "default", owner.Pub, ev)
		if err != nil || !out.Accepted {
			t.Fatalf("kind %d: %s %v", ev.Kind, out.Message, err)
		}
	}
	create := func(tags ...nostr.Tag) string {
		t.Helper()
		id := testkit.ChannelID()
		submit(owner.EventAt(t, at, 9007, "", append([]nostr.Tag{{"h", id}}, tags...)...))
		return id
	}
	edit := func(id string, tags ...nostr.Tag) {
		t.Helper()
		submit(owner.EventAt(t, at.Add(time.Second), 9002, "", append([]nostr.Tag{{"h", id}}, tags...)...))
	}
	buzzPrivate := create(nostr.Tag{"visibility", "private"})
	buzzEdited := create()
	edit(buzzEdited, nostr.Tag{"visibility", "private"})
	nip29Private := create(nostr.Tag{"private"}, nostr.Tag{"closed"})
	nip29ThenBuzz := create(nostr.Tag{"private"})
	edit(nip29ThenBuzz, nostr.Tag{"visibility", "private"})
	buzzThenNIP29 := create(nostr.Tag{"visibility", "private"})
	edit(buzzThenNIP29, nostr.Tag{"private"}, nostr.Tag{"restricted"})
	open := create(nostr.Tag{"visibility", "open"})
	renamed := create(nostr.Tag{"visibility", "private"})
	edit(renamed, nostr.Tag{"name", "a name-only edit keeps the flags"})
	// A channel no flag-setting event of which is stored.
	bare := testkit.ChannelID()
	if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
		_, err := tx.ChannelsInsert(ctx, &nip29.Channel{ID: bare, Name: "bare", Type: nip29.TypeStream, Visibility: nip29.Private,
			Labels: []string{}, Creator: owner.Pub, CreatedAt: at.Unix(), Flags: nip29.Flags{Private: true, Restricted: true, Closed: true}}, testkit.ChannelID())
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// The rows as the mapping before issue 36 left them, and the database
	// at the version before 014.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE channels SET hidden = false WHERE id = ANY($1)`,
		[]string{buzzPrivate, buzzEdited, nip29ThenBuzz, renamed}); err != nil {
		t.Fatal(err)
	}
	// The migration's own statements, as migrate runs them: rolling the
	// version back and migrating again would re-run the migrations after
	// it too, which are not written to run twice.
	sql, err := fs.ReadFile(migrations.FS, migrationFile(t, "_buzz_private_hidden.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, string(sql)); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{
		buzzPrivate: true, buzzEdited: true, nip29ThenBuzz: true, renamed: true, bare: true,
		nip29Private: false, buzzThenNIP29: false, open: false,
	} {
		var hidden bool
		if err := conn.QueryRow(ctx, `SELECT hidden FROM channels WHERE id = $1`, id).Scan(&hidden); err != nil {
			t.Fatal(err)
		}
		if hidden != want {
			t.Errorf("channel %s: hidden %v, want %v", id, hidden, want)
		}
	}
}

// migrationVersion is the version of the migration file whose name ends in
// suffix (its leading number).
// migrationFile is the name of the migration whose name ends in suffix.
func migrationFile(t *testing.T, suffix string) string {
	t.Helper()
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, suffix) {
			return name
		}
	}
	t.Fatalf("no migration ends in %s", suffix)
	return ""
}
