package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/buzzrelay/relay/shared/app"
	"github.com/buzzrelay/relay/shared/config"
	"github.com/buzzrelay/relay/shared/query"
)

func main() {
	t0 := time.Now()
	ctx := context.Background()
	log := app.Logger()
	cfg, err := config.FromEnv()
	fmt.Fprintln(os.Stderr, "config", time.Since(t0), err)
	st, err := cfg.Store(ctx)
	fmt.Fprintln(os.Stderr, "store", time.Since(t0), err)
	st.Close()
	sg, err := cfg.Signer(ctx)
	fmt.Fprintln(os.Stderr, "signer", time.Since(t0), err, sg != nil)
	_, err = cfg.Sealer(ctx)
	fmt.Fprintln(os.Stderr, "sealer", time.Since(t0), err)
	a, err := app.BuildWith(ctx, cfg, log)
	fmt.Fprintln(os.Stderr, "build", time.Since(t0), err)
	h := a.QueryHTTP(query.New(a.Store, a.Signer))
	fmt.Fprintln(os.Stderr, "queryhttp", time.Since(t0), h != nil)
	fo, err := a.Fanout(ctx)
	fmt.Fprintln(os.Stderr, "fanout", time.Since(t0), err, fo != nil)
	_ = a.WSMessage(fo)
	fmt.Fprintln(os.Stderr, "wsmessage", time.Since(t0))
}
