package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestRunIsIdempotent applies the migrations twice to the Postgres of
// DATABASE_URL (make test-core provides one through localdev/pg.sh).
func TestRunIsIdempotent(t *testing.T) {
	if os.Getenv("DATABASE_URL") == "" {
		t.Fatal("DATABASE_URL is not set: run the tests with `make test`, which starts Postgres")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v1, err := run(ctx, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := run(ctx, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if v1 < 1 || v1 != v2 {
		t.Fatalf("versions %d then %d", v1, v2)
	}
}

func TestRunNeedsADatabase(t *testing.T) {
	if _, err := run(context.Background(), func(string) string { return "" }); err == nil {
		t.Fatal("ran without a database")
	}
}
