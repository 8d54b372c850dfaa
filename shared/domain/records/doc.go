// Package records holds the nouns the relay's data is made of, as the
// services and transports use them: a channel with its stored state, a
// community, an event's stored facts and the rows a read returns, media
// blobs and uploads, bans, reports and audit rows, invites, rate hits, the
// deployment's status, and the errors that mean "not found", "taken",
// "banned" or "over quota". shared/postgres/store reads and writes them
// (the only package that knows their tables); everything above it speaks
// these types, so no transport imports the store.
//
// Files by role: channels.go, communities.go, events.go (events, threads,
// the rows reads return), media.go, moderation.go (standing, bans, audit
// and reports), invites.go, ratelimits.go, status.go, errors.go.
package records
