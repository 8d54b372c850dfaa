package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"
)

// TestRunSmall runs the benchmark at a small scale: every subscriber gets
// every event and the figures are filled in.
func TestRunSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := Run(ctx, os.Getenv("DATABASE_URL"), Options{Subs: 20, LatencyEvents: 5, Events: 20, Publishers: 2, DBConns: 8, DialParallel: 10}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Missing != 0 || res.DeliveriesPerRun != 20*25 || res.P99ms <= 0 || res.IngestPerSecond <= 0 {
		t.Fatalf("result %+v", res)
	}
}
