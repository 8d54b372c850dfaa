// Package testkit is the one kit every test of the relay builds on: a
// fresh migrated database on the real Postgres that `make test` starts
// (never a mock: a test that cannot reach it fails, it does not skip),
// keys and signed events, NIP-98 tokens, bulk-seeded channels and a local
// KMS. It reaches the database through shared/postgres/store, and through
// shared/postgres/dbtest for what only tests do (cloning databases, bulk
// loads, a direct look at a table). No function binary links it
// (shared/postgres/store/door_test.go).
package testkit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/buzzrelay/relay/migrations"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// templatePrefix names the migrated template databases, one per version
// of migrations/ (the hash of its files).
const templatePrefix = "buzz_tpl_"

var template struct {
	once sync.Once
	name string
	err  error
}

// AdminDSN is DATABASE_URL, the server the test databases live on.
func AdminDSN(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("DATABASE_URL")
	if admin == "" {
		t.Fatal("DATABASE_URL is not set: run the tests with `make test`, which starts Postgres")
	}
	return admin
}

// NewDatabase creates a database with every migration applied (a copy of
// a template migrated once per version of migrations/) and returns its
// DSN. The database is dropped when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	template.once.Do(func() {
		template.name, template.err = migratedTemplate(ctx, admin)
	})
	if template.err != nil {
		t.Fatalf("migrated template database: %v", template.err)
	}
	return newDatabase(t, ctx, admin, template.name)
}

func newDatabase(t testing.TB, ctx context.Context, admin, template string) string {
	t.Helper()
	name := "t_" + randomHex(6)
	dsn, err := dbtest.CreateDatabase(ctx, admin, name, template)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = dbtest.DropDatabase(ctx, admin, name)
	})
	return dsn
}

// NewStore opens a store on a fresh migrated database, closed when the
// test ends.
func NewStore(t testing.TB, o store.Options) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, NewDatabase(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// NewStoreDB is NewStore and a dbtest.DB on the same database, for the
// statements only tests run (a look at a table, EXPLAIN, bulk seeding);
// both are closed when the test ends.
func NewStoreDB(t testing.TB, o store.Options) (*store.Store, *dbtest.DB) {
	t.Helper()
	dsn := NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, OpenDB(t, dsn)
}

// OpenDB opens a dbtest.DB on the database at dsn, closed when the test
// ends.
func OpenDB(t testing.TB, dsn string) *dbtest.DB {
	t.Helper()
	db, err := dbtest.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func migratedTemplate(ctx context.Context, admin string) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		h.Write([]byte(path + "\x00"))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	name := templatePrefix + hex.EncodeToString(h.Sum(nil))[:16]
	err = dbtest.EnsureTemplate(ctx, admin, templatePrefix, name, func(ctx context.Context, dsn string) error {
		_, err := migrate.Run(ctx, dsn, slog.New(slog.DiscardHandler))
		return err
	})
	return name, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Quiet is a logger that drops everything.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }
