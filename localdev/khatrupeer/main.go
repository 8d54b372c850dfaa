// Command khatrupeer serves khatru (v0.19.1, go-nostr v0.51.8) with its
// Postgres event store (no auth, no groups) as the peer that
// localdev/peerbench runs the relay's WebSocket load against. It is its own
// module so that khatru is never a dependency of the relay; peerbench
// builds it and runs it as a process, as it runs the relay.
//
//	DATABASE_URL=... go run . -addr 127.0.0.1:7447
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/fiatjaf/eventstore/postgresql"
	"github.com/fiatjaf/khatru"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7447", "address to serve on")
	flag.Parse()
	if err := serve(*addr, os.Getenv("DATABASE_URL")); err != nil {
		fmt.Fprintln(os.Stderr, "khatrupeer:", err)
		os.Exit(1)
	}
}

// serve runs khatru on addr over the Postgres database at dsn.
func serve(addr, dsn string) error {
	if dsn == "" {
		return fmt.Errorf("DATABASE_URL is not set")
	}
	db := postgresql.PostgresBackend{DatabaseURL: dsn}
	if err := db.Init(); err != nil {
		return fmt.Errorf("event store: %w", err)
	}
	relay := khatru.NewRelay()
	relay.StoreEvent = append(relay.StoreEvent, db.SaveEvent)
	relay.QueryEvents = append(relay.QueryEvents, db.QueryEvents)
	relay.CountEvents = append(relay.CountEvents, db.CountEvents)
	relay.DeleteEvent = append(relay.DeleteEvent, db.DeleteEvent)
	relay.ReplaceEvent = append(relay.ReplaceEvent, db.ReplaceEvent)
	return http.ListenAndServe(addr, relay)
}
