package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"
)

// TestMain lets this test binary be a listener process (listeners.go).
func TestMain(m *testing.M) {
	if os.Getenv(listenerEnv) != "" {
		listen()
	}
	os.Exit(m.Run())
}

// TestRunSmall runs the benchmark at a small scale, inline and through the
// fan-out function (threshold below the audience), with the subscribers in
// this process and in two listener processes: every subscriber gets every
// event once and the figures are filled in.
func TestRunSmall(t *testing.T) {
	for _, o := range []Options{
		{Subs: 20, LatencyEvents: 5, Events: 20, Publishers: 2, DBConns: 8, DialParallel: 10},
		{Subs: 20, LatencyEvents: 5, Events: 20, Publishers: 2, DBConns: 8, DialParallel: 10, InlineMax: 5, BatchSize: 7},
		{Subs: 21, LatencyEvents: 5, Events: 20, Publishers: 2, DBConns: 8, DialParallel: 10, InlineMax: 5, BatchSize: 7,
			ListenerProcesses: 2, ListenerNice: 5},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		res, err := Run(ctx, os.Getenv("DATABASE_URL"), o, io.Discard)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Missing != 0 || res.DeliveriesPerRun != o.Subs*25 || res.P99ms <= 0 || res.IngestPerSecond <= 0 || res.NoListenersPerSecond <= 0 {
			t.Fatalf("result %+v", res)
		}
		// 20 or 21 subscriptions in parts of about 7: 3 runs per event.
		if async := o.InlineMax > 0; async != (res.AsyncRuns == 3*25) {
			t.Fatalf("inline max %d: %d fan-out runs", o.InlineMax, res.AsyncRuns)
		}
	}
}
