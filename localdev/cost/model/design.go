package model

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// The client actions a design prices. The first seven are the WebSocket
// lifecycle of an always-open client (Lifecycle); EVENT and REQ are the
// traffic of Usage.Messages.
const (
	ActConnect    = "$connect"        // and the greeting handed to ws-push: one asynchronous Invoke
	ActGreet      = "greeting"        // ws-push posts the challenge and records the open connection
	ActEarlyREQ   = "REQ before AUTH" // answered CLOSED auth-required
	ActAuth       = "AUTH"            // the challenge, then OK
	ActResumeREQ  = "REQ since"       // a reconnect's REQ with since at or after the last commit: EOSE only
	ActHeartbeat  = "heartbeat"       // NDK's probe: REQ {kinds:[99999],limit:0} answered EOSE, then CLOSE
	ActDisconnect = "$disconnect"
	ActEvent      = "EVENT" // any message answered with one frame (EVENT's OK)
	ActREQ        = "REQ"   // a REQ's EOSE; each stored event adds a post
	// ActNIP11 is one GET / with Accept: application/nostr+json (an HTTP
	// request of the query function, Clients.NIP11PollMinutes).
	ActNIP11 = "NIP-11"
)

// ActionOrder is the order the design table is printed in.
var ActionOrder = []string{ActConnect, ActGreet, ActEarlyREQ, ActAuth, ActResumeREQ, ActHeartbeat, ActDisconnect, ActEvent, ActREQ, ActNIP11}

// Action is what one client action costs in a design.
type Action struct {
	Function    string  // the function API Gateway runs for it
	Invocations float64 // of Function (a heartbeat is two messages)
	Seconds     float64 // run time of all its invocations besides the posts
	Received    float64 // client messages API Gateway meters ($connect and $disconnect are not messages)
	Posts       float64 // frames posted through @connections, each a sent message
	DBTrips     float64 // database round trips: any wakes a paused Aurora
	S3Gets      float64
	S3Puts      float64
	// DDBReads and DDBWrites are the sessions' DynamoDB request units.
	DDBReads, DDBWrites float64
}

// Design is one way the relay serves these actions: which touch the
// database and what else they call.
type Design struct {
	Name, About string
	Actions     map[string]Action
	// Notes are the design's assumptions, printed with the bill.
	Notes []string
	// Liveness: the design keeps the open connections where the push
	// function's liveness tick lists them (the session bucket, or with
	// LivenessDynamoDB the sessions' table), so each tick posts a frame to
	// every open client.
	Liveness, LivenessDynamoDB bool
}

// Designs are the ways the model can price. "current" is the code as it
// is (round trips and posts as localdev/roundtrips counts them,
// docs/benchmarks.md: first message 2, AUTH 2, REQ with nothing stored 3,
// with stored events 4, EVENT 4, CLOSE 1), which a stack without a session
// bucket (SESSION_BUCKET unset: media off) runs; "lastcommit" is the
// sessions' idle state in S3 (shared/service/sessions.Idle, issue 31's "An
// open app should not keep Aurora awake"), which the stack runs with media
// on, its S3 requests read from that code (docs/architecture.md, "An open
// app and the database"). An S3 LIST is priced as a PUT (the same tier).
//
// "dynamodb" is the code as it ships: the sessions in DynamoDB
// (shared/aws/ddbsessions), its request units counted from that code.
var Designs = map[string]Design{
	"dynamodb": {
		Name:  "dynamodb",
		About: "no database for $connect, AUTH, CLOSE, $disconnect and a REQ of limit 0 or since after the last commit; the sessions in DynamoDB (SESSION_TABLE)",
		Actions: map[string]Action{
			ActConnect:    {Function: "ws-connect", Invocations: 1, Seconds: 0.025},
			ActGreet:      {Function: "ws-push", Invocations: 1, Seconds: 0.015, Posts: 1, DDBWrites: 1},
			ActEarlyREQ:   {Function: "ws-message", Invocations: 1, Seconds: 0.015, Received: 1, Posts: 1, DDBReads: 1, DDBWrites: 2},
			ActAuth:       {Function: "ws-message", Invocations: 1, Seconds: 0.010, Received: 1, Posts: 2, DDBReads: 1, DDBWrites: 1},
			ActResumeREQ:  {Function: "ws-message", Invocations: 1, Seconds: 0.025, Received: 1, Posts: 1, DDBReads: 1, DDBWrites: 5},
			ActHeartbeat:  {Function: "ws-message", Invocations: 2, Seconds: 0.040, Received: 2, Posts: 1, DDBWrites: 9},
			ActDisconnect: {Function: "ws-disconnect", Invocations: 1, Seconds: 0.020, DDBReads: 1, DDBWrites: 8},
			ActEvent:      {Function: "ws-message", Invocations: 1, Seconds: 0.020, Received: 1, Posts: 1, DBTrips: 4, DDBReads: 2},
			ActREQ:        {Function: "ws-message", Invocations: 1, Seconds: 0.020, Received: 1, Posts: 1, DBTrips: 3, DDBReads: 1, DDBWrites: 5},
			// The host's directory document (shared/service/directory): one
			// conditional GET, answered 304 while it is unchanged.
			ActNIP11: {Function: "query", Invocations: 1, Seconds: 0.010, S3Gets: 1},
		},
		Liveness: true, LivenessDynamoDB: true,
		Notes: []string{
			"as the code runs it (shared/aws/ddbsessions): the challenge is derived, never stored; the greeting puts the open entry (1 write); the first message reads the connection, records it and marks its challenge (1 read, 2 writes); AUTH reads it and records the key (1 read, 1 write); a REQ adds its id to the connection's and the key's sets (2 writes, and 1 for the key set's expiry), puts the subscription (1) and one audience entry per pinned channel (1 here), then reads the mark (1 read; none for limit 0); CLOSE deletes the subscription, its entries and its places in both sets (4 writes); $disconnect queries the connection's items and deletes them with their entries (1 read, 8 writes for 2 subscriptions); an EVENT raises the mark only when this instance does not know it is high enough (not priced here) and fan-out reads the audience of its channel and the any-channel bucket after the commit (2 reads)",
			"host resolution at a connection's first message is the community registry's (cached within its TTL; not priced here)",
		},
	},
	"current": {
		Name:  "current",
		About: "every message and $disconnect run database statements; $connect does not",
		Actions: map[string]Action{
			ActConnect:    {Function: "ws-connect", Invocations: 1, Seconds: 0.025},
			ActGreet:      {Function: "ws-push", Invocations: 1, Seconds: 0.010, Posts: 1},
			ActEarlyREQ:   {Function: "ws-message", Invocations: 1, Seconds: 0.010, Received: 1, Posts: 1, DBTrips: 2},
			ActAuth:       {Function: "ws-message", Invocations: 1, Seconds: 0.010, Received: 1, Posts: 2, DBTrips: 2},
			ActResumeREQ:  {Function: "ws-message", Invocations: 1, Seconds: 0.015, Received: 1, Posts: 1, DBTrips: 3},
			ActHeartbeat:  {Function: "ws-message", Invocations: 2, Seconds: 0.025, Received: 2, Posts: 1, DBTrips: 4},
			ActDisconnect: {Function: "ws-disconnect", Invocations: 1, Seconds: 0.010, DBTrips: 1},
			ActEvent:      {Function: "ws-message", Invocations: 1, Seconds: 0.020, Received: 1, Posts: 1, DBTrips: 4},
			ActREQ:        {Function: "ws-message", Invocations: 1, Seconds: 0.015, Received: 1, Posts: 1, DBTrips: 4},
			// Without a bucket there is no directory: the registry reads
			// the host's community (its cache lasts 5 s, less than any
			// poll's period).
			ActNIP11: {Function: "query", Invocations: 1, Seconds: 0.010, DBTrips: 1},
		},
		Notes: []string{
			"the first message registers the connection (its challenge), AUTH stores the key, a REQ stores its subscription and reads, CLOSE deletes it, $disconnect deletes the connection's rows: each wakes a paused Aurora",
			"$connect hands the greeting to ws-push (one Invoke, about 20 ms), which posts the challenge; without the session bucket nothing lists the open connections, so the liveness ticks post nothing",
		},
	},
	"lastcommit": {
		Name:  "lastcommit",
		About: "no database for $connect, AUTH, $disconnect and a REQ since the last commit; the sessions' state in S3 (SESSION_BUCKET)",
		Actions: map[string]Action{
			ActConnect:   {Function: "ws-connect", Invocations: 1, Seconds: 0.025},
			ActGreet:     {Function: "ws-push", Invocations: 1, Seconds: 0.020, Posts: 1, S3Puts: 2},
			ActEarlyREQ:  {Function: "ws-message", Invocations: 1, Seconds: 0.010, Received: 1, Posts: 1, S3Gets: 1},
			ActAuth:      {Function: "ws-message", Invocations: 1, Seconds: 0.015, Received: 1, Posts: 2, S3Gets: 1, S3Puts: 1},
			ActResumeREQ: {Function: "ws-message", Invocations: 1, Seconds: 0.030, Received: 1, Posts: 1, S3Gets: 2, S3Puts: 3},
			// NDK's probe has no since: it takes the database path (its
			// REQ and the rate limit in 2 round trips, CLOSE 2 more).
			ActHeartbeat:  {Function: "ws-message", Invocations: 2, Seconds: 0.030, Received: 2, Posts: 1, DBTrips: 4, S3Gets: 1, S3Puts: 1},
			ActDisconnect: {Function: "ws-disconnect", Invocations: 1, Seconds: 0.010, S3Gets: 1, S3Puts: 2},
			ActEvent:      {Function: "ws-message", Invocations: 1, Seconds: 0.020, Received: 1, Posts: 1, DBTrips: 4},
			ActREQ:        {Function: "ws-message", Invocations: 1, Seconds: 0.015, Received: 1, Posts: 1, DBTrips: 4},
			// The host's directory document (shared/service/directory): one
			// conditional GET, answered 304 while it is unchanged.
			ActNIP11: {Function: "query", Invocations: 1, Seconds: 0.010, S3Gets: 1},
		},
		Liveness: true,
		Notes: []string{
			"as the code runs it (shared/service/sessions/idle.go): the challenge is derived, never stored; AUTH reads the host entry and keeps the connection's key (1 GET, 1 PUT); a REQ with since after the last commit reads the connection and the mark, writes its pending subscription and lists the mark again (2 GET, 1 PUT, 2 LIST); $disconnect writes a gone mark (1 GET, 1 PUT, 1 DELETE); each write lists the pending (1 LIST, more when the mark rises; not priced here); a REQ without since (NDK's limit-0 heartbeat) and CLOSE still use the database",
		},
	},
}

// DesignNames are the designs, sorted.
func DesignNames() []string { return slices.Sorted(maps.Keys(Designs)) }

// Posting is how a function posts its frames: PostSeconds per
// @connections round trip, InFlight posts at a time (the code posts a
// REQ's events one after another, in order: 1).
type Posting struct {
	PostSeconds float64
	InFlight    float64
}

// Seconds is the run time of a with extra more posts (a REQ's stored
// events): the posts go out InFlight at a time.
func (p Posting) Seconds(a Action, extra float64) float64 {
	posts := a.Posts + extra
	if posts == 0 {
		return a.Seconds
	}
	return a.Seconds + math.Ceil(posts/max(p.InFlight, 1))*p.PostSeconds
}

// Check makes sure every action of d runs a function s deploys.
func (d Design) Check(s Stack) error {
	for _, name := range ActionOrder {
		a, ok := d.Actions[name]
		if !ok {
			return fmt.Errorf("design %s does not price %s", d.Name, name)
		}
		if _, ok := s.Function(a.Function); !ok {
			return fmt.Errorf("design %s: %s runs function %q, which the stack does not deploy", d.Name, name, a.Function)
		}
	}
	return nil
}
