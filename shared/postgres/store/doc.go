// Package store is the relay's only door to PostgreSQL (pgx): it owns every
// SQL statement, and callers pass the community id each statement is
// scoped by. The nouns it reads and writes (a channel, a community, a
// blob, a report, ...) and the errors that say what a failure means are
// the domain's, shared/domain/records and shared/domain/session: no
// transport imports the store (TestTransportsSpeakTheDomainNotTheStore).
// Shared predicates are written once, in access.go beside the access
// rule's SQL twin that uses them and access/testdata/cases.json holds:
// activeMember (a channel_members row not removed), notDeleted (an event
// or channel not deleted), unexpiredAt (no expiry, or one after now);
// push.go's pushSubscriptionLive builds on unexpiredAt
// (TestActiveMemberWrittenOnce, TestNotDeletedWrittenOnce).
//
// Methods are named Table+Verb (+ what the verb qualifies), as river names
// JobGetByID: the table first, in its SQL plural (ChannelMembersGetRole
// reads channel_members), or the aggregate a group below names (Bans,
// Audience, MediaUsage, Operators: communities.operators, Vanished); then
// one verb of a fixed set:
//   - Get (one row or value; GetBy<Key> for another key; records.ErrNotFound
//     or ok=false when missing), List (rows), Count, Exists;
//   - Check (a rule the rows decide: a rejection, or which keys pass);
//   - Insert, Upsert (insert or update in one statement), Put (the row as
//     given, whatever stood), Update (the row's fields), Set<Field> (one
//     field), Add (to a counter), Delete (gone, or marked deleted), Ensure
//     (create unless it exists), Enable / Disable;
//   - Lock (FOR UPDATE / an advisory lock), Claim and Take (a conditional
//     update that wins or not), Revoke.
//
// The pool's and transactions' own methods (Close, Ping, Tx, Read,
// ReadPlain, Statements, Status, Tx.Community) are no table's.
// TestStoreMethodsAreTableVerb holds every method of *Store and *Tx to
// this; Snapshot's reads are named by the read they are (Window, Thread).
//
// Its files are grouped by the table or aggregate they serve, fixed
// statements beside the Go that runs them:
//
//   - Pool and transactions: store.go (Store, Open, Ping, the write
//     transaction Tx), connect.go (the IAM token as password), lazytx.go
//     (BEGIN sent with the first statement, a deferred check riding on the
//     next one), errors.go (interpret: what a database error means, decided
//     once and applied to every error returned, no other file comparing
//     with pgx.ErrNoRows or a SQLSTATE (TestDatabaseErrorsInterpretedOnce): records.ErrNotFound,
//     records.ErrTaken, records.ErrConflict, reject.ErrUnavailable), statements.go (the count of statements
//     sent, for the benchmarks), roundtrip.go (the emulated Aurora round
//     trip, APIGW_COSTS), status.go (the operator's deep status).
//   - Events and threads (the write side): events.go (events and
//     event_tags: one insert statement per shape, lookups, deletions,
//     addresses), threads.go (thread_metadata's counters), channels.go
//     (channels, channel_members, channel_state_heads, and EventsGetTarget, a
//     replied-to event with its channel and the author's role), groups.go
//     (NIP-29 beyond channels: subgroups' parent chains, group_invites),
//     dm.go (Buzz's DM channels: a participant's hidden mark, the creating
//     kind), buzzkinds.go (Buzz's kinds: forum votes, a reader's own state
//     events, the community's NIP-CW row mode).
//   - Bans and moderation: bans.go (community_pubkey_rules,
//     community_banned_events, and the check every write carries),
//     moderation.go (operators, the bans NIP-86 and Buzz's 9040-9044
//     manage, moderation_actions' audit rows, the NIP-56 report queue),
//     desktop.go (Buzz desktop's moderation and admin reads: the queue by
//     status, the audit newest first, restrictions in force, kind 42000
//     product_feedback), vanish.go (NIP-62: a key's data deleted, its return refused).
//   - Relay membership: relaymembers.go (NIP-43: relay_members and
//     communities.membership_enforced).
//   - Media: blobs.go (Blossom blobs, blob_owners, blob_refs,
//     blob_uploads: metadata, owners, staged uploads, quotas).
//   - Reads: read.go (Snapshot, one read-only REPEATABLE READ transaction),
//     snapshot.go (Seen, the snapshot a read saw, and the events committed
//     after it: an early-answered REQ's catch-up, events.xact),
//     readfilter.go (the dynamic NIP-01 filter compiler and keyset),
//     readwindow.go, readthread.go, readthreadwindow.go, readaux.go,
//     readcount.go (the channel window, thread panels and summaries, the
//     NIP-CW thread window, the aux closure, COUNT), readmarks.go (Buzz's
//     sidebar: a key's joined channels, read_marks and each channel's
//     unread window; ReadMarksPut), readitems.go (NIP-77's
//     item sets: created_at and id of every match), and access.go (the
//     access rule's SQL twin, ChannelsCheckReadable, ChannelMembersCheckEver).
//   - Live delivery: delivery.go (what live delivery reads of the
//     committed events, at commit or after it; the sessions and their
//     subscriptions live in DynamoDB, shared/aws/ddbsessions).
//   - Communities: communities.go (communities, their hostnames, relay
//     keys, info and operators).
//   - Limits: ratelimits.go (the rate counters).
//   - Workflows: workflows.go (Buzz's workflows: workflows, workflow_runs,
//     workflow_steps, workflow_approvals).
//   - NIP-98 replay: nip98.go (tokens seen).
//   - NIP-29 LiveKit: livekit.go (livekit_participants: who is live in a
//     room; and a key's seat in one channel: its type,
//     active membership and ban, for the token endpoint).
//   - Invitations: invites.go (invites, their claims, join policies).
//   - Push notifications: push.go (push_subscriptions, the effective
//     state of each 30390 and 30350; the community's executor key),
//     pushdeliveries.go (push_deliveries, one row per event and
//     subscription, and the events a batch names; push_rates, the
//     per-minute caps each try takes, all or none).
//   - Login roles: roles.go (the IAM database user).
//
// Database cloning and bulk loads, which only tests, the seed command and
// benchmarks use, live in shared/postgres/dbtest, so no function binary
// links them. door_test.go fails when another package imports pgx.
package store
