// Command s3 is the local S3-compatible server (localdev/s3local) that
// localdev/s3.sh starts for `make dev`: buckets under -dir, on -addr.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/buzzrelay/relay/localdev/s3local"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	dir := flag.String("dir", ".localdev/s3/data", "folder holding the buckets")
	buckets := flag.String("buckets", "buzz-media", "comma-separated buckets to create")
	flag.Parse()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	s, err := s3local.Start(*addr, *dir, log, strings.Split(*buckets, ",")...)
	if err != nil {
		log.Error("s3", "err", err)
		os.Exit(1)
	}
	fmt.Printf("local S3 on %s (buckets %s, data in %s)\n", s.URL, *buckets, *dir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	_ = s.Close()
}
