// Package store is the relay's only door to PostgreSQL (pgx): it owns every
// SQL statement, and callers pass the community id each statement is
// scoped by. Its files are grouped by the table or aggregate they serve,
// fixed statements beside the Go that runs them:
//
//   - Pool and transactions: store.go (Store, Open, Ping, the write
//     transaction Tx), connect.go (the IAM token as password), lazytx.go
//     (BEGIN sent with the first statement, a deferred check riding on the
//     next one), errors.go (what a database error means, decided once:
//     ErrNotFound, ErrTaken, IsSerialization, and unavailability marked
//     reject.ErrUnavailable).
//   - Events and threads (the write side): events.go (events and
//     event_tags: one insert statement per shape, lookups, deletions,
//     addresses), threads.go (thread_metadata's counters), channels.go
//     (channels, channel_members, channel_state_heads, and Target, a
//     replied-to event with its channel and the author's role).
//   - Bans: bans.go (community_pubkey_rules, community_banned_events, and
//     the check every write carries).
//   - Reads: read.go (Snapshot, one read-only REPEATABLE READ transaction),
//     readfilter.go (the dynamic NIP-01 filter compiler and keyset),
//     readwindow.go, readthread.go, readaux.go, readcount.go (the channel
//     window, thread panels and summaries, the aux closure, COUNT), and
//     access.go (the access rule's SQL twin, Readable, EverMembers).
//   - Sessions and live delivery: connections.go (ws_connections),
//     subscriptions.go (ws_subscriptions and their channel index, the
//     fan-out function's audience ranges), delivery.go (what live delivery
//     reads, at commit or after it).
//   - Communities: communities.go (communities, their hostnames, relay
//     keys, info and operators).
//   - Limits: ratelimits.go (the rate counters).
//   - NIP-98 replay: nip98.go (tokens seen).
//   - Login roles: roles.go (the IAM database user).
//
// Database cloning and bulk loads, which only tests, the seed command and
// benchmarks use, live in shared/postgres/dbtest, so no function binary
// links them. door_test.go fails when another package imports pgx.
package store
