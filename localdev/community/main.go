// Command community manages the communities one deployment hosts, against
// DATABASE_URL (the local Postgres of `make dev`, or a deployed cluster
// reached from an operator's machine):
//
//	go run ./localdev/community add -id ID -host HOST[,HOST...] -name NAME [-about TEXT] [-picture URL] [-operator PUBKEY[,PUBKEY...]]
//	go run ./localdev/community list
//	go run ./localdev/community disable -id ID
//	go run ./localdev/community enable -id ID
//	go run ./localdev/community rotate-key -id ID
//	go run ./localdev/community refresh
//
// A community added or changed here is served by a running relay within
// the registry's TTL (shared/service/community.DefaultTTL), without a
// restart; each change also rewrites the community's directory documents
// (shared/service/directory, in DIRECTORY_BUCKET, else
// MEDIA_BUCKET, as the relay finds them), which NIP-11 and a new WebSocket
// connection read at once. refresh rewrites every community's documents
// (after a change made to the database by hand). Its
// relay key is sealed the way the relay opens it (config.Sealer): the local
// seal key next to .localdev/relay.key, or KMS with RELAY_SIGNER=kms and
// RELAY_KMS_KEY_ID (local-kms with AWS_ENDPOINT_URL_KMS).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "community:", err)
		os.Exit(1)
	}
}

const usage = "usage: community add|list|disable|enable|rotate-key|refresh [flags] (see go doc ./localdev/community)"

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	id := fs.String("id", "", "community id")
	hosts := fs.String("host", "", "hostname(s), comma-separated")
	name := fs.String("name", "", "name (NIP-11)")
	about := fs.String("about", "", "description (NIP-11)")
	picture := fs.String("picture", "", "icon URL (NIP-11)")
	operators := fs.String("operator", "", "NIP-86 operator pubkey(s), hex, comma-separated")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set (source localdev/pg.sh, or point it at the deployment's database)")
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, store.Options{MaxConns: 1})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer st.Close()
	dir, err := cfg.OpenDirectory(ctx, st)
	if err != nil {
		return err
	}
	if dir == nil && cmd != "list" {
		fmt.Fprintln(out, "note: no directory bucket is set (DIRECTORY_BUCKET or MEDIA_BUCKET): a relay that keeps one serves its old documents until `community refresh` runs with it")
	}
	needID := func() error {
		if *id == "" {
			return fmt.Errorf("%s needs -id", cmd)
		}
		return nil
	}
	switch cmd {
	case "list":
		cs, err := community.List(ctx, st)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, "id\thosts\tname\trelay pubkey\tstate")
		for _, c := range cs {
			fmt.Fprintln(out, c.Describe())
		}
		return nil
	case "add":
		if err := needID(); err != nil {
			return err
		}
		sealer, err := cfg.Sealer(ctx)
		if err != nil || sealer == nil {
			return fmt.Errorf("add: no sealer for the relay key: %v", err)
		}
		pub, err := community.Create(ctx, st, sealer, dir, community.Spec{
			ID: *id, Hosts: split(*hosts), Name: *name, About: *about, Picture: *picture, Operators: split(*operators),
		})
		if err != nil {
			return fmt.Errorf("add: %w", err)
		}
		fmt.Fprintf(out, "community %s added on %s, relay pubkey %s\n", *id, *hosts, pub)
		return nil
	case "disable", "enable":
		if err := needID(); err != nil {
			return err
		}
		var err error
		if cmd == "enable" {
			err = community.Enable(ctx, st, *id, dir)
		} else {
			// The directory says so at once; a WebSocket host entry the
			// sessions keep in S3 lasts its hour, but is no longer read
			// where the directory is kept.
			err = community.Disable(ctx, st, *id, dir)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		fmt.Fprintf(out, "community %s %sd\n", *id, cmd)
		return nil
	case "rotate-key":
		if err := needID(); err != nil {
			return err
		}
		sealer, err := cfg.Sealer(ctx)
		if err != nil || sealer == nil {
			return fmt.Errorf("rotate-key: no sealer for the relay key: %v", err)
		}
		pub, err := community.RotateKey(ctx, st, sealer, *id, dir)
		if err != nil {
			return fmt.Errorf("rotate-key: %w", err)
		}
		fmt.Fprintf(out, "community %s has a new relay key, pubkey %s\n", *id, pub)
		return nil
	case "refresh":
		if dir == nil {
			return errors.New("refresh: no directory bucket is set (DIRECTORY_BUCKET or MEDIA_BUCKET)")
		}
		if err := dir.RefreshAll(ctx); err != nil {
			return fmt.Errorf("refresh: %w", err)
		}
		fmt.Fprintln(out, "directory documents rewritten")
		return nil
	}
	return fmt.Errorf("unknown command %q; %s", cmd, usage)
}

func split(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
