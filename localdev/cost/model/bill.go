package model

import (
	"fmt"
	"math"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// The liveness ticks (shared/wiring/lambdas: a rule every
// LivenessRateMinutes, and again LivenessDelaySeconds later through the
// delay queue).
const (
	LivenessTicks float64 = 2 * 60 / lambdas.LivenessRateMinutes * HoursPerMonth
	// LivenessTickSeconds is a tick's run time besides its posts (the
	// LIST of the open connections).
	LivenessTickSeconds = 0.030
	// PushPostsInFlight is the posts a tick keeps in flight
	// (wire.PostsInFlight).
	PushPostsInFlight = 64
	// SQSIdlePolls: Lambda's pollers of a standard queue long-poll it (20
	// s) while it is empty, five at a time: 15 ReceiveMessage a minute.
	// An assumption: AWS documents the five pollers an event source
	// mapping starts with, not their idle rate.
	SQSIdlePolls float64 = 15 * 60 * HoursPerMonth
	// SQSRequestsPerDelayedTick: EventBridge's SendMessage, the receive
	// that returns it, Lambda's DeleteMessage.
	SQSRequestsPerDelayedTick = 3
)

// Per-request assumptions besides the design table (see docs/deploy.md).
const (
	// QuerySeconds is the query function's run time per HTTP request.
	QuerySeconds = 0.050
	// AuthorizeSeconds is the $connect authorizer's run time (deployed
	// with -c hostnames; no database).
	AuthorizeSeconds = 0.005
	// IOPerTrip is Aurora I/Os per database round trip.
	IOPerTrip = 1.0
	// IOPerQuery is Aurora I/Os per HTTP query.
	IOPerQuery = 2.0
	// LogBytesPerInvocation is CloudWatch Logs ingested per invocation.
	LogBytesPerInvocation = 300
	// NATInstanceVolumeGB is the NAT instance's root volume (the AMI's
	// default; the template does not set one).
	NATInstanceVolumeGB = 8
	// Media (docs/deploy.md, "Media"): an upload is at worst a staged
	// presigned PUT, the relay's read of it to verify the SHA-256 and a
	// COPY to blobs/ (a direct upload is one PUT); two HTTP API requests
	// (the upload or its presign, and the completion), each a function
	// run, plus the hashing at about 100 MB/s. A download is one HTTP
	// request whose function answers with a redirect, and one presigned
	// S3 GET that sends the bytes.
	putsPerUpload     = 2
	getsPerUpload     = 1
	requestsPerUpload = 2
	hashSecondsPerGB  = 10
)

// Usage is one month of traffic on a stack.
type Usage struct {
	Design string // a key of Designs
	// DBHours the database is awake (not paused) besides the modelled
	// wakes of Clients, at DBACU on average (also the ACU of those wakes).
	DBHours, DBACU float64
	// Messages is client WebSocket messages; REQs of them are REQs, each
	// answered with EventsPerReq stored events and an EOSE; every other
	// message gets one reply (OK, CLOSED, NOTICE, AUTH...). Fanout is live
	// deliveries of events to other subscribers.
	Messages, REQs, EventsPerReq, Fanout float64
	// Pushes are the push sender's batches (docs/push.md): one per commit
	// in a community with push subscriptions, each assumed to send one
	// callback or wake (PushSeconds).
	Pushes      float64
	ConnMinutes float64
	Queries     float64 // HTTP POST /query, /count, /events
	StoredGB    float64
	SentKB      float64 // average sent message / response
	KeyYear     int     // age of the KMS key, in years (1 = first year)
	// Media: GB stored in S3 on average over the month, uploads and
	// downloads of blobs of MediaMB on average.
	MediaGB, MediaUploads, MediaDownloads, MediaMB float64
	// DNSElsewhere: the -c domain's zone is not in Route 53 (no hosted
	// zone line); DNSQueries are the Route 53 queries a month that are
	// not of alias records to the distribution (those are free).
	DNSElsewhere bool
	DNSQueries   float64
	// Clients are always-open WebSocket clients (-connected).
	Clients Clients
	Posting Posting
}

// PushSeconds is one push sender run as assumed: load the batch and the
// community's subscriptions, store the deliveries, re-check access and
// one callback or wake of about 100 ms; PushKB the request it sends.
const (
	PushSeconds = 0.3
	PushKB      = 2.0
	// PushDialSeconds is the push dialer's run per push (the request
	// itself, outside the VPC; the sender waits for it within
	// PushSeconds).
	PushDialSeconds = 0.2
)

// PushPerThousand is what a thousand pushes add to a bill on s at p: the
// push sender's requests and GB-seconds (the committing function's one
// asynchronous invoke is within its own run), without the egress's per-GB
// charge (a few KB each).
func PushPerThousand(s Stack, p Prices) (float64, bool) {
	f, ok := s.Function("push-sender")
	if !ok {
		return 0, false
	}
	per := func(f Function, seconds float64) float64 {
		price := p.LambdaGBSecondArm
		if f.Arch == "x86_64" {
			price = p.LambdaGBSecondX86
		}
		return p.LambdaPerMillion/1e6 + seconds*f.MemoryMB/1024*price
	}
	total := per(f, PushSeconds)
	if d, ok := s.Function("push-dialer"); ok { // one synchronous invoke per push
		total += per(d, PushDialSeconds)
	}
	return 1000 * total, true
}

// Line is one item of the bill.
type Line struct {
	Item string
	USD  float64
}

// Bill is the month of u on s at p, with the lifecycle it simulated.
func Bill(u Usage, s Stack, p Prices) ([]Line, Lifecycle, error) {
	d, ok := Designs[u.Design]
	if !ok {
		return nil, Lifecycle{}, fmt.Errorf("design must be one of %v, got %q", DesignNames(), u.Design)
	}
	if err := d.Check(s); err != nil {
		return nil, Lifecycle{}, err
	}
	for _, fn := range []string{"query", "ingest"} {
		if _, ok := s.Function(fn); !ok {
			return nil, Lifecycle{}, fmt.Errorf("the stack does not deploy function %s, which serves the HTTP requests", fn)
		}
	}
	life, err := Simulate(u.Clients, d, s.Database)
	if err != nil {
		return nil, life, err
	}
	var out []Line
	add := func(usd float64, format string, a ...any) {
		out = append(out, Line{fmt.Sprintf(format, a...), usd})
	}
	m := func(n float64) string { return fmt.Sprintf("%.3gM", n/1e6) }

	// What every action of the month adds up to: function runs and
	// GB-seconds per function, WebSocket messages, S3 requests, I/O.
	invocations := 0.0
	gbs := map[string]float64{} // by architecture
	run := func(fn string, n, seconds float64) {
		f, _ := s.Function(fn)
		invocations += n
		gbs[f.Arch] += n * seconds * f.MemoryMB / 1024
	}
	var received, sent, s3Gets, s3Puts, trips, ddbReads, ddbWrites, pushOutGB float64
	act := func(name string, n, extraPosts float64) {
		a := d.Actions[name]
		if n == 0 {
			return
		}
		run(a.Function, n*a.Invocations, u.Posting.Seconds(a, extraPosts)/max(a.Invocations, 1))
		received += n * a.Received
		sent += n * (a.Posts + extraPosts)
		s3Gets += n * a.S3Gets
		s3Puts += n * a.S3Puts
		ddbReads += n * a.DDBReads
		ddbWrites += n * a.DDBWrites
		trips += n * a.DBTrips
	}
	for _, name := range ActionOrder {
		act(name, life.Count[name], 0)
	}
	if _, ok := s.Function("ws-authorize"); ok { // -c hostnames: the $connect authorizer runs first
		run("ws-authorize", life.Count[ActConnect], AuthorizeSeconds)
	}
	act(ActREQ, u.REQs, u.EventsPerReq)
	act(ActEvent, u.Messages-u.REQs, 0)
	sent += u.Fanout
	if u.Pushes > 0 {
		if _, ok := s.Function("push-sender"); !ok {
			return nil, life, fmt.Errorf("the stack does not deploy function push-sender, which sends the pushes")
		}
		run("push-sender", u.Pushes, PushSeconds)
		if _, ok := s.Function("push-dialer"); ok {
			run("push-dialer", u.Pushes, PushDialSeconds) // the request, outside the VPC
		}
		pushOutGB = u.Pushes * PushKB / 1e6 // requests out through the egress
	}
	connMinutes := u.ConnMinutes + float64(u.Clients.N)*HoursPerMonth*60

	// Network.
	outGB := (sent+u.Queries)*u.SentKB/1e6 + pushOutGB
	// Media bytes that pass a function: every upload is read once (a
	// direct body, or the staged object to verify it); downloads go from
	// S3 to the client and never do.
	mediaInGB := u.MediaUploads * u.MediaMB / 1e3
	mediaOutGB := u.MediaDownloads * u.MediaMB / 1e3
	n := s.Network
	switch n.Egress {
	case "ipv6":
		add(0, "egress-only internet gateway (IPv6, no hourly charge)")
	case "nat-gateway":
		add(float64(n.NATGateways)*HoursPerMonth*p.NATGatewayHour, "NAT gateway %d x %d h x $%.3f", n.NATGateways, HoursPerMonth, p.NATGatewayHour)
		add(float64(n.NATGateways)*(outGB+mediaInGB)*p.NATGatewayGB, "NAT processing %.2f GB x $%.3f", outGB+mediaInGB, p.NATGatewayGB)
	case "nat-instance":
		for _, typ := range n.NATInstances {
			h, ok := p.InstanceHour[typ]
			if !ok {
				return nil, life, fmt.Errorf("no price for NAT instance type %q: add it to model.USEast1.InstanceHour", typ)
			}
			add(HoursPerMonth*h, "NAT instance %s %d h x $%.4f", typ, HoursPerMonth, h)
			add(NATInstanceVolumeGB*p.GP3GBMonth, "NAT instance %d GB gp3 x $%.2f", NATInstanceVolumeGB, p.GP3GBMonth)
		}
	case "none":
		add(0, "no egress from the functions")
	default:
		return nil, life, fmt.Errorf("unknown egress %q", n.Egress)
	}
	if n.PublicIPv4 > 0 {
		add(float64(n.PublicIPv4)*HoursPerMonth*p.PublicIPv4Hour, "public IPv4 %d x %d h x $%.3f", n.PublicIPv4, HoursPerMonth, p.PublicIPv4Hour)
	}
	if n.Alarms > 0 {
		add(float64(n.Alarms)*p.AlarmMonth, "NAT instance recovery alarm(s) %d x $%.2f", n.Alarms, p.AlarmMonth)
	}
	if n.InterfaceEndpoints > 0 {
		add(float64(n.InterfaceEndpoints)*HoursPerMonth*p.InterfaceEndpointHour, "interface endpoint ENIs %d x %d h x $%.2f (their GB not modelled)", n.InterfaceEndpoints, HoursPerMonth, p.InterfaceEndpointHour)
	}
	add(outGB*p.TransferOutGB, "data transfer out %.2f GB x $%.2f", outGB, p.TransferOutGB)

	// Media in S3 ($0 with nothing stored and no traffic), and the
	// requests of the WebSocket design.
	if s.Buckets > 0 {
		add(u.MediaGB*p.S3GBMonth, "S3 media storage %.1f GB-month x $%.3f", u.MediaGB, p.S3GBMonth)
		puts := u.MediaUploads*putsPerUpload + s3Puts
		add(puts/1e3*p.S3PutPerThousand, "S3 PUT/COPY requests %s x $%.3f/1000", m(puts), p.S3PutPerThousand)
		gets := u.MediaUploads*getsPerUpload + u.MediaDownloads + s3Gets
		add(gets/1e3*p.S3GetPerThousand, "S3 GET requests %s x $%.4f/1000", m(gets), p.S3GetPerThousand)
		add(mediaOutGB*p.TransferOutGB, "S3 media transfer out %.2f GB x $%.2f", mediaOutGB, p.TransferOutGB)
	} else if u.MediaGB+u.MediaUploads+u.MediaDownloads+s3Gets+s3Puts > 0 {
		return nil, life, fmt.Errorf("the stack has no S3 bucket for media or the design's S3 requests")
	}

	// Database.
	db := s.Database
	if db.Instances == 0 {
		return nil, life, fmt.Errorf("the stack has no Aurora Serverless v2 instance")
	}
	acu := max(u.DBACU, db.MinACU)
	if db.MinACU > 0 {
		add(float64(db.Instances)*HoursPerMonth*acu*p.ACUHour, "Aurora compute %d instance(s) x %d h x %.1f ACU x $%.2f (min capacity %g: never pauses)", db.Instances, HoursPerMonth, acu, p.ACUHour, db.MinACU)
	} else {
		add(float64(db.Instances)*u.DBHours*acu*p.ACUHour, "Aurora compute %.0f h awake x %.1f ACU x $%.2f ($0 while paused)", u.DBHours, acu, p.ACUHour)
		h := max(min(life.AwakeSeconds/3600, HoursPerMonth-u.DBHours), 0) // never more than the month
		add(float64(db.Instances)*h*acu*p.ACUHour, "Aurora compute, modelled wakes: %d resumes, %.1f h awake x %.1f ACU x $%.2f", life.Resumes, h, acu, p.ACUHour)
		if s.Sweeps > 0 {
			// The expiry sweep resumes a paused database once per run and
			// keeps it up until the auto-pause (taken as a worst case: a
			// run that finds it awake costs nothing more).
			runs := float64(s.Sweeps) * HoursPerMonth / lambdas.SweepRateHours
			sh := min(runs*db.WakeSeconds()/3600, max(HoursPerMonth-u.DBHours-h, 0))
			add(float64(db.Instances)*sh*acu*p.ACUHour, "Aurora compute, expiry sweep: %.0f resumes, %.1f h awake x %.1f ACU x $%.2f", runs, sh, acu, p.ACUHour)
		}
	}
	add(u.StoredGB*p.StorageGBMonth, "Aurora storage %.1f GB x $%.2f (backups up to that size free)", u.StoredGB, p.StorageGBMonth)
	io := trips*IOPerTrip + u.Queries*IOPerQuery
	add(io/1e6*p.IOPerMillion, "Aurora I/O %s x $%.2f/M", m(io), p.IOPerMillion)

	// Keys and secrets.
	rotations := 0
	if s.Rotating > 0 {
		rotations = min(max(u.KeyYear-1, 0), 2)
	}
	add(float64(s.KMSKeys)*p.KMSKeyMonth+float64(s.Rotating*rotations)*p.KMSRotationMonth,
		"KMS key(s) %d x $%.2f + %d rotation(s) x $%.2f (year %d)", s.KMSKeys, p.KMSKeyMonth, s.Rotating*rotations, p.KMSRotationMonth, u.KeyYear)
	add(float64(s.Secrets)*p.SecretMonth, "Secrets Manager secret(s) %d x $%.2f (the master secret; migrate only)", s.Secrets, p.SecretMonth)

	// APIs and functions.
	add((received+sent)/1e6*p.WSMessagePerMillion, "WebSocket messages %s received + %s sent x $%.2f/M", m(received), m(sent), p.WSMessagePerMillion)
	add(connMinutes/1e6*p.WSConnMinutePerMillion, "WebSocket connection minutes %s x $%.2f/M", m(connMinutes), p.WSConnMinutePerMillion)
	mediaReqs := u.MediaUploads*requestsPerUpload + u.MediaDownloads
	httpReqs := u.Queries + mediaReqs + life.Count[ActNIP11]
	add(httpReqs/1e6*p.HTTPPerMillion, "HTTP API requests %s x $%.2f/M", m(httpReqs), p.HTTPPerMillion)
	run("query", u.Queries+u.MediaDownloads, QuerySeconds)
	run("ingest", u.MediaUploads*requestsPerUpload, QuerySeconds)
	if f, ok := s.Function("ingest"); ok { // hashing, in the upload runs counted above
		gbs[f.Arch] += mediaInGB * hashSecondsPerGB * f.MemoryMB / 1024
	}
	add(invocations/1e6*p.LambdaPerMillion, "Lambda requests %s x $%.2f/M", m(invocations), p.LambdaPerMillion)
	add(gbs["arm64"]*p.LambdaGBSecondArm, "Lambda %.0f GB-s x $%.10f (arm64)", gbs["arm64"], p.LambdaGBSecondArm)
	if gbs["x86_64"] > 0 {
		add(gbs["x86_64"]*p.LambdaGBSecondX86, "Lambda %.0f GB-s x $%.10f (x86_64)", gbs["x86_64"], p.LambdaGBSecondX86)
	}
	logGB := invocations * LogBytesPerInvocation / 1e9
	add(logGB*p.LogsIngestGB, "CloudWatch Logs %.2f GB x $%.2f", logGB, p.LogsIngestGB)
	stored := logGB * math.Min(float64(s.LogRetentionDays), 365) / (HoursPerMonth / 24.0)
	add(stored*p.LogsStoredGBMonth, "CloudWatch Logs stored %.2f GB (%d log groups, %d days) x $%.2f", stored, s.LogGroups, s.LogRetentionDays, p.LogsStoredGBMonth)
	if s.Alarms > 0 {
		add(float64(s.Alarms)*p.AlarmMonth, "CloudWatch alarms %d x $%.2f", s.Alarms, p.AlarmMonth)
	}
	if s.Schedules > 0 && s.Queues > 0 {
		lv, err := livenessLines(u, s, d, p)
		if err != nil {
			return nil, life, err
		}
		out = append(out, lv...)
	}
	if ddbReads+ddbWrites > 0 {
		if s.Tables == 0 {
			return nil, life, fmt.Errorf("design %s keeps the sessions in DynamoDB, but the stack has no table", d.Name)
		}
		add(ddbWrites/1e6*p.DynamoDBWritePerMillion+ddbReads/1e6*p.DynamoDBReadPerMillion,
			"DynamoDB sessions: %s write units x $%.3f/M + %s read units x $%.3f/M (on demand)", m(ddbWrites), p.DynamoDBWritePerMillion, m(ddbReads), p.DynamoDBReadPerMillion)
	}
	add(0, "AWS Budgets (-c budgetUSD): the first two budgets are free")
	if s.Domains > 0 && !u.DNSElsewhere {
		add(float64(s.Domains)*p.Route53ZoneMonth, "Route 53 hosted zone of -c domain %d x $%.2f (A/AAAA alias records to the distribution: their queries are free)", s.Domains, p.Route53ZoneMonth)
	}
	if u.DNSQueries > 0 {
		add(u.DNSQueries/1e6*p.Route53PerMillionQueries, "Route 53 standard queries %s x $%.2f/M (not alias records to the distribution)", m(u.DNSQueries), p.Route53PerMillionQueries)
	}
	if s.Distributions > 0 {
		add(0, "CloudFront %d distribution(s), the one hostname: no monthly fee; always free each month: %s HTTPS requests, %.0f GB out, %s function invocations; past them $%.4f per 10,000 HTTPS requests, $%.3f/GB out, $%.2f/M function invocations (price class 100, North America and Europe)",
			s.Distributions, m(p.CloudFrontFreeRequests), p.CloudFrontFreeGB, m(p.CloudFrontFreeFunctions), p.CloudFrontPer10kHTTPS, p.CloudFrontPerGB, p.CloudFrontFunctionPerMillion)
		add(0, "Lambda@Edge (requests to /media/upload only: Buzz desktop's uploads): $%.2f/M requests + $%.8f/GB-s, two runs per request", p.LambdaEdgePerMillion, p.LambdaEdgeGBSecond)
	}
	return out, life, nil
}

// OpenEntryBytes is the size of one open connection's entry in the
// sessions' table as a Query reads it (keys, expiry and ttl).
const OpenEntryBytes = 80

// Total is the sum of the lines.
func Total(lines []Line) float64 {
	t := 0.0
	for _, l := range lines {
		t += l.USD
	}
	return t
}

// livenessLines price the liveness ticks (docs/architecture.md, "Greeting
// and liveness"), their own lines: with its schedule deployed (a rule and
// the delay queue) the push function runs LivenessTicks times a month;
// with the design's registry of open connections (the session bucket)
// each tick GETs when the last connection opened and, while one may be
// open (the always-open clients), LISTs them and posts a frame to each.
// The greetings are the design table's.
func livenessLines(u Usage, s Stack, d Design, p Prices) ([]Line, error) {
	f, ok := s.Function("ws-push")
	if !ok {
		return nil, fmt.Errorf("the stack schedules liveness ticks but deploys no ws-push function")
	}
	m := func(n float64) string { return fmt.Sprintf("%.3gM", n/1e6) }
	clients, gets, lists, queries := 0.0, 0.0, 0.0, 0.0
	switch {
	case d.Liveness && d.LivenessDynamoDB:
		// One strongly consistent Query of the open entries a tick: a
		// read unit per 4 KB, at least one.
		clients = float64(u.Clients.N)
		queries = LivenessTicks * math.Max(1, math.Ceil(clients*OpenEntryBytes/4096))
	case d.Liveness:
		clients, gets = float64(u.Clients.N), LivenessTicks
		if u.Clients.N > 0 {
			lists = LivenessTicks
		}
	}
	secs := LivenessTickSeconds + math.Ceil(clients/PushPostsInFlight)*u.Posting.PostSeconds
	gbs := LivenessTicks * secs * f.MemoryMB / 1024
	logGB := LivenessTicks * LogBytesPerInvocation / 1e9
	sqs := SQSIdlePolls + SQSRequestsPerDelayedTick*LivenessTicks/2
	return []Line{
		{fmt.Sprintf("liveness ticks: ws-push %s runs (2 a minute) x $%.2f/M, %.0f GB-s, %.3f GB of logs", m(LivenessTicks), p.LambdaPerMillion, gbs, logGB),
			LivenessTicks/1e6*p.LambdaPerMillion + gbs*p.LambdaGBSecondArm + logGB*p.LogsIngestGB},
		{fmt.Sprintf("liveness ticks: S3 %s GET x $%.4f/1000, %s LIST x $%.3f/1000", m(gets), p.S3GetPerThousand, m(lists), p.S3PutPerThousand),
			gets/1e3*p.S3GetPerThousand + lists/1e3*p.S3PutPerThousand},
		{fmt.Sprintf("liveness ticks: DynamoDB %s read units (a Query of the open entries) x $%.3f/M", m(queries), p.DynamoDBReadPerMillion),
			queries / 1e6 * p.DynamoDBReadPerMillion},
		{fmt.Sprintf("liveness frames: %s to %g client(s) x $%.2f/M (WebSocket messages)", m(LivenessTicks*clients), clients, p.WSMessagePerMillion),
			LivenessTicks * clients / 1e6 * p.WSMessagePerMillion},
		{fmt.Sprintf("liveness delay queue: SQS %s requests (idle polls, the delayed ticks) x $%.2f/M", m(sqs), p.SQSPerMillion),
			sqs / 1e6 * p.SQSPerMillion},
		{"liveness schedule: EventBridge scheduled rule events are free", 0},
	}, nil
}
