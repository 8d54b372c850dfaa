package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Profile is one client library's idle session as recorded against the
// relay (localdev/cost/profiles/<client>.json, written by the recorder:
// localdev/e2e's TestRecordIdleProfiles): what its socket cost from the
// upgrade to its first reads (Start), over IdleSeconds of idling with its
// live subscriptions and its own timers (Idle), when the relay closed its
// socket (Reconnect) and when it went away (End). Nothing in it is assumed: the counts are the relay's.
type Profile struct {
	Client   string `json:"client"`
	Library  string `json:"library"`
	Recorded string `json:"recorded"` // date, and the commit recorded at
	Command  string `json:"command"`  // how to record it again
	// LivenessSeconds is the liveness tick's period while recording.
	LivenessSeconds float64 `json:"liveness_seconds"`
	IdleSeconds     float64 `json:"idle_seconds"`
	Start           Phase   `json:"start"`
	Idle            Phase   `json:"idle"`
	End             Phase   `json:"end"`
	// Reconnect is what the relay closing the socket cost (as API Gateway
	// does after 2 hours): the old socket's $disconnect, the library's own
	// reconnection and what it sent again, when Reconnects (it came back
	// by itself); otherwise a new socket is priced as End and Start (the
	// app opens anew).
	Reconnect  Phase `json:"reconnect"`
	Reconnects bool  `json:"reconnects_by_itself"`
	// IdleBursts are the seconds into the idle minutes at which the
	// database ran statements (a burst each).
	IdleBursts []float64 `json:"idle_statement_bursts"`
	// TickAWS are the AWS requests of each liveness tick while the client
	// was open (the push function's listing of the open connections).
	TickAWS map[string]float64 `json:"tick_aws_requests"`
}

// Phase is what one part of a session cost.
type Phase struct {
	Connects   float64 `json:"connects"`    // $connect (reconnects, in Idle)
	MessagesIn float64 `json:"messages_in"` // client messages: ws-message runs
	FramesOut  float64 `json:"frames_out"`  // frames posted to the client, liveness frames included
	// AWS are the requests of the client's own invocations, by "Service
	// Operation".
	AWS        map[string]float64 `json:"aws_requests"`
	Statements float64            `json:"statements"`
}

// plus is x and y together.
func (x Phase) plus(y Phase) Phase {
	aws := maps.Clone(x.AWS)
	if aws == nil {
		aws = map[string]float64{}
	}
	for k, v := range y.AWS {
		aws[k] += v
	}
	return Phase{Connects: x.Connects + y.Connects, MessagesIn: x.MessagesIn + y.MessagesIn, FramesOut: x.FramesOut + y.FramesOut,
		AWS: aws, Statements: x.Statements + y.Statements}
}

// ParseProfile reads a recorded profile.
func ParseProfile(b []byte) (Profile, error) {
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("profile: %w", err)
	}
	if p.Client == "" || p.IdleSeconds <= 0 {
		return p, fmt.Errorf("profile: no client or no idle seconds recorded")
	}
	return p, nil
}

// InvocationSeconds is a WebSocket function's run time per invocation
// besides its posts (an assumption: the design table's order of
// magnitude); each frame posted adds Posting.PostSeconds.
const InvocationSeconds = 0.015

// ClientMonth is a month of n always-open clients of one profile, each
// reconnecting at once when its socket ends: after API Gateway's 2 hours,
// or sooner when the recording saw it reconnect.
type ClientMonth struct {
	N                  int
	SessionMinutes     float64
	Sessions           float64 // sockets opened in the month, all clients
	MessagesIn         float64
	FramesOut          float64
	Runs               map[string]float64 // function runs
	AWS                map[string]float64 // requests by "Service Operation"
	Statements         float64
	Bursts, Resumes    int
	AwakeSeconds       float64
	TickAWS            map[string]float64 // the liveness ticks' requests
	ConnectionsMinutes float64
}

// Month runs n clients of p for a month against db.
func Month(p Profile, n int, db Database) (ClientMonth, error) {
	if n < 0 {
		return ClientMonth{}, fmt.Errorf("clients cannot be negative")
	}
	m := ClientMonth{N: n, SessionMinutes: MaxConnectionMinutes, Runs: map[string]float64{}, AWS: map[string]float64{}, TickAWS: map[string]float64{}}
	if p.Idle.Connects > 0 { // it reconnected while idle
		m.SessionMinutes = min(m.SessionMinutes, p.IdleSeconds/60/p.Idle.Connects)
	}
	if n == 0 {
		return m, nil
	}
	session := m.SessionMinutes * 60
	perClient := HoursPerMonth * 3600 / session
	m.Sessions = perClient * float64(n)
	idleScale := session / p.IdleSeconds // idle phase per socket
	reconnect := p.Reconnect
	if !p.Reconnects { // the app opens anew: the old socket's end, a start
		reconnect = p.End.plus(p.Start)
	}
	later := perClient - 1 // sockets after a client's first
	per := func(f func(Phase) float64) float64 {
		return float64(n) * (f(p.Start) + later*f(reconnect) + perClient*idleScale*f(p.Idle))
	}
	m.MessagesIn = per(func(x Phase) float64 { return x.MessagesIn })
	m.FramesOut = per(func(x Phase) float64 { return x.FramesOut })
	m.Statements = per(func(x Phase) float64 { return x.Statements })
	for _, ph := range []struct {
		x     Phase
		scale float64
	}{{p.Start, 1}, {reconnect, later}, {p.Idle, perClient * idleScale}} {
		for k, v := range ph.x.AWS {
			m.AWS[k] += float64(n) * v * ph.scale
		}
	}
	m.Runs["ws-connect"] = m.Sessions
	m.Runs["ws-push"] = m.Sessions // the greeting
	m.Runs["ws-disconnect"] = m.Sessions
	m.Runs["ws-message"] = m.MessagesIn
	for k, v := range p.TickAWS {
		m.TickAWS[k] = v * LivenessTicks
	}
	m.ConnectionsMinutes = float64(n) * HoursPerMonth * 60

	// When the database runs statements: a burst at a socket's start
	// (and its end) when those ran any, and the idle bursts, repeated
	// every IdleSeconds; client i's sockets open at i/n of a socket's life.
	var at []float64
	for i := 0; i < n; i++ {
		offset := session * float64(i) / float64(n)
		for k := 0.0; k < perClient; k++ {
			start := offset + k*session
			if (k == 0 && p.Start.Statements > 0) || (k > 0 && reconnect.Statements > 0) {
				at = append(at, start)
			}
			for rep := 0.0; rep*p.IdleSeconds < session; rep++ {
				for _, b := range p.IdleBursts {
					if t := rep*p.IdleSeconds + b; t < session {
						at = append(at, start+t)
					}
				}
			}
		}
	}
	m.Bursts = len(at)
	if db.MinACU == 0 {
		m.Resumes, m.AwakeSeconds = Awake(at, db)
	}
	return m, nil
}

// dynamoDBReads are the DynamoDB operations billed as read request units;
// every other DynamoDB operation is billed as a write.
var dynamoDBReads = map[string]bool{"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true, "TransactGetItems": true}

// s3Gets are the S3 operations billed at the GET tier; DELETE is free;
// every other operation (PUT, COPY, POST, LIST) at the PUT tier.
var s3Gets = map[string]bool{"GetObject": true, "HeadObject": true, "HeadBucket": true}

// awsLines price requests by "Service Operation" (S3, DynamoDB, KMS; a
// Lambda Invoke is its function's run, priced with the runs).
func awsLines(what string, req map[string]float64, p Prices) ([]Line, error) {
	var s3get, s3put, ddbR, ddbW, kms float64
	for _, k := range slices.Sorted(maps.Keys(req)) {
		service, op, _ := strings.Cut(k, " ")
		n := req[k]
		switch service {
		case "S3":
			switch {
			case op == "DeleteObject" || op == "DeleteObjects":
			case s3Gets[op]:
				s3get += n
			default:
				s3put += n
			}
		case "DynamoDB":
			if dynamoDBReads[op] {
				ddbR += n
			} else {
				ddbW += n
			}
		case "KMS":
			kms += n
		case "Lambda":
		default:
			return nil, fmt.Errorf("no price for %s requests (%s)", service, k)
		}
	}
	mm := func(n float64) string { return fmt.Sprintf("%.3gM", n/1e6) }
	var out []Line
	if s3get+s3put > 0 {
		out = append(out, Line{fmt.Sprintf("%s: S3 %s GET x $%.4f/1000, %s PUT/LIST x $%.3f/1000", what, mm(s3get), p.S3GetPerThousand, mm(s3put), p.S3PutPerThousand),
			s3get/1e3*p.S3GetPerThousand + s3put/1e3*p.S3PutPerThousand})
	}
	if ddbR+ddbW > 0 {
		out = append(out, Line{fmt.Sprintf("%s: DynamoDB %s reads x $%.3f/M, %s writes x $%.3f/M (on demand, one unit each)", what, mm(ddbR), p.DynamoDBReadPerMillion, mm(ddbW), p.DynamoDBWritePerMillion),
			ddbR/1e6*p.DynamoDBReadPerMillion + ddbW/1e6*p.DynamoDBWritePerMillion})
	}
	if kms > 0 {
		out = append(out, Line{fmt.Sprintf("%s: KMS %s requests x $%.2f/10,000", what, mm(kms), p.KMSPerTenThousand), kms / 1e4 * p.KMSPerTenThousand})
	}
	return out, nil
}

// ClientBill is the bill of n always-open clients of profile pr on s: the
// stack's idle bill (Bill with no usage, in design lastcommit, whose
// liveness S3 line gives way to the recorded ticks') and the clients'
// recorded traffic, line by line.
func ClientBill(pr Profile, n int, u Usage, s Stack, p Prices) ([]Line, ClientMonth, error) {
	u.Clients = Clients{}
	u.Design = "lastcommit"
	base, _, err := Bill(u, s, p)
	if err != nil {
		return nil, ClientMonth{}, err
	}
	m, err := Month(pr, n, s.Database)
	if err != nil {
		return nil, m, err
	}
	var out []Line
	for _, l := range base {
		if n > 0 && strings.HasPrefix(l.Item, "liveness ticks: S3") {
			continue // the recorded ticks' requests below
		}
		out = append(out, l)
	}
	if n == 0 {
		return out, m, nil
	}
	add := func(usd float64, format string, a ...any) { out = append(out, Line{fmt.Sprintf(format, a...), usd}) }
	mm := func(n float64) string { return fmt.Sprintf("%.3gM", n/1e6) }
	who := fmt.Sprintf("%d %s client(s)", n, pr.Client)
	add((m.MessagesIn+m.FramesOut)/1e6*p.WSMessagePerMillion, "%s: WebSocket messages %s received + %s sent x $%.2f/M", who, mm(m.MessagesIn), mm(m.FramesOut), p.WSMessagePerMillion)
	add(m.ConnectionsMinutes/1e6*p.WSConnMinutePerMillion, "%s: WebSocket connection minutes %s x $%.2f/M", who, mm(m.ConnectionsMinutes), p.WSConnMinutePerMillion)
	runs, gbs := 0.0, 0.0
	for _, fn := range slices.Sorted(maps.Keys(m.Runs)) {
		f, ok := s.Function(fn)
		if !ok {
			return nil, m, fmt.Errorf("the stack does not deploy function %s", fn)
		}
		runs += m.Runs[fn]
		gbs += m.Runs[fn] * InvocationSeconds * f.MemoryMB / 1024
		if fn == "ws-message" {
			gbs += m.FramesOut * u.Posting.PostSeconds * f.MemoryMB / 1024
		}
	}
	add(runs/1e6*p.LambdaPerMillion+gbs*p.LambdaGBSecondArm, "%s: Lambda %s runs x $%.2f/M, %.0f GB-s (%.0f ms a run, %.0f ms a post) x $%.10f", who, mm(runs), p.LambdaPerMillion, gbs, InvocationSeconds*1000, u.Posting.PostSeconds*1000, p.LambdaGBSecondArm)
	logGB := runs * LogBytesPerInvocation / 1e9
	add(logGB*p.LogsIngestGB, "%s: CloudWatch Logs %.3f GB x $%.2f", who, logGB, p.LogsIngestGB)
	lines, err := awsLines(who, m.AWS, p)
	if err != nil {
		return nil, m, err
	}
	out = append(out, lines...)
	if lines, err = awsLines("liveness ticks while clients are open", m.TickAWS, p); err != nil {
		return nil, m, err
	}
	out = append(out, lines...)
	db := s.Database
	acu := max(u.DBACU, db.MinACU)
	if db.MinACU == 0 {
		h := min(m.AwakeSeconds/3600, HoursPerMonth)
		add(float64(db.Instances)*h*acu*p.ACUHour, "%s: Aurora compute, %d bursts of statements, %d resumes, %.1f h awake x %.1f ACU x $%.2f", who, m.Bursts, m.Resumes, h, acu, p.ACUHour)
	}
	add(m.Statements*IOPerTrip/1e6*p.IOPerMillion, "%s: Aurora I/O %s statements x $%.2f/M", who, mm(m.Statements), p.IOPerMillion)
	return out, m, nil
}
