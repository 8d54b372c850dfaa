// Command seed bulk-loads synthetic channels for the query benchmark:
//
//	source localdev/pg.sh && go run ./localdev/seed -events 1000000
//
// It migrates the database first, loads one open channel per -events value
// with COPY, then runs ANALYZE.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/google/uuid"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run() error {
	dsn := flag.String("dsn", os.Getenv("DATABASE_URL"), "Postgres DSN (default $DATABASE_URL)")
	counts := flag.String("events", "10000", "comma-separated event counts, one channel each")
	perSecond := flag.Int("per-second", 5, "events sharing one created_at second")
	community := flag.String("community", "default", "community id")
	sign := flag.Bool("sign", false, "real signatures (slow)")
	flag.Parse()
	if *dsn == "" {
		return fmt.Errorf("no -dsn and no DATABASE_URL")
	}
	ctx := context.Background()
	if _, err := migrate.Up(ctx, *dsn); err != nil {
		return err
	}
	db, err := dbtest.Open(ctx, *dsn)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer db.Close()
	start := time.Now().Unix() - 86400*365
	for i, c := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad event count %q", c)
		}
		ch := uuid.NewString()
		t0 := time.Now()
		res, err := testkit.Seed(ctx, db, testkit.SeedOptions{Community: *community, Channel: ch, Events: n,
			Start: start, PerSecond: *perSecond, Seed: uint64(i + 1), Sign: *sign})
		if err != nil {
			return err
		}
		fmt.Printf("channel %s: %d events (%d top-level, %d replies, %d reactions, %d edits, %d deletions) in %s\n",
			ch, n, res.TopLevel, res.Replies, res.Reactions, res.Edits, res.Deletions, time.Since(t0).Round(time.Millisecond))
	}
	t0 := time.Now()
	if err := db.Analyze(ctx); err != nil {
		return err
	}
	fmt.Printf("analyzed in %s\n", time.Since(t0).Round(time.Millisecond))
	return nil
}
