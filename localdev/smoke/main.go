// Command smoke checks a running relay end to end with a real nostr client
// (go-nostr): NIP-11, GET /healthz, NIP-42 AUTH, creating a channel, posting
// to it, a channel-window query on POST /query with NIP-98, live delivery of
// an event posted over POST /events to a WebSocket subscriber, COUNT, and
// deleting the channel again. It prints one line per check and last
// "N/M smoke checks pass"; it exits 1 when any check fails.
//
//	go run ./localdev/smoke -url http://127.0.0.1:8080
//	make smoke URL=https://relay.example.com
//
// -ws names the WebSocket URL when it is not the base URL's host (API
// Gateway's default endpoints give the HTTP and WebSocket APIs different
// hosts). The checks sign as a fresh key unless -key (hex secret) is given.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var cfg Config
	flag.StringVar(&cfg.URL, "url", os.Getenv("URL"), "relay base URL, http(s)://host (default $URL)")
	flag.StringVar(&cfg.WSURL, "ws", os.Getenv("WS_URL"), "WebSocket URL (default: the base URL with ws(s)://; $WS_URL)")
	flag.StringVar(&cfg.SecretKey, "key", os.Getenv("SMOKE_KEY"), "hex secret key to sign as (default: a fresh key; $SMOKE_KEY)")
	flag.DurationVar(&cfg.Timeout, "timeout", 20*time.Second, "limit per check")
	flag.DurationVar(&cfg.Wait, "wait", 0, "first wait up to this long for GET /healthz to answer 200 (a relay still starting)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.URL == "" {
		fmt.Fprintln(os.Stderr, "smoke: give the relay URL: make smoke URL=http://127.0.0.1:8080 (or -url)")
		os.Exit(2)
	}
	if !Run(ctx, cfg, os.Stdout) {
		os.Exit(1)
	}
}

// Run runs every check against cfg's relay, reporting to out; true when all pass.
func Run(ctx context.Context, cfg Config, out io.Writer) bool {
	s, err := newSmoke(cfg, out)
	if err == nil && cfg.Wait > 0 {
		err = s.waitHealthy(ctx, cfg.Wait)
	}
	if err != nil {
		fmt.Fprintf(out, "FAIL setup: %v\n0/%d smoke checks pass\n", err, len(checks))
		return false
	}
	defer s.close()
	pass := 0
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		start := time.Now()
		detail, err := s.run(cctx, c)
		cancel()
		took := time.Since(start).Round(time.Millisecond)
		if err != nil {
			fmt.Fprintf(out, "FAIL %-15s %v (%s)\n", c.name, err, took)
			continue
		}
		pass++
		fmt.Fprintf(out, "ok   %-15s %s (%s)\n", c.name, detail, took)
	}
	fmt.Fprintf(out, "%d/%d smoke checks pass\n", pass, len(checks))
	return pass == len(checks)
}
