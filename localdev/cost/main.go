// Command cost prints the monthly AWS bill of one relay stack, line by
// line, from the us-east-1 list prices in prices below and the usage given
// by flags; with no usage flags it is the idle bill of the profile.
//
//	go run ./localdev/cost                       # community, idle
//	go run ./localdev/cost -profile managed
//	go run ./localdev/cost -messages 1e6 -reqs 2e5 -events-per-req 20 -db-hours 100
//	go run ./localdev/cost -media-gb 50 -media-uploads 2e4 -media-downloads 5e5 -media-mb 2
//
// The last line is `total: $N.NN/month`. docs/deploy.md's cost tables are
// its output. Free tiers are left out; a month is 730 hours.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// PricesDate is when the prices below were read from AWS's public pricing
// pages (us-east-1, on-demand).
const PricesDate = "2026-12-03"

// S3PricesDate dates the S3 Standard lines (S3GBMonth, S3PutPerThousand,
// S3GetPerThousand): us-east-1 list prices as published for S3 Standard
// (first 50 TB), taken on this date from secondary copies of the pricing
// page, whose tables render client-side.
const S3PricesDate = "2026-12-04"

// prices are US dollars, us-east-1.
var prices = struct {
	ACUHour, StorageGBMonth, IOPerMillion        float64 // Aurora Serverless v2 (Aurora Standard)
	KMSKeyMonth, KMSRotationMonth                float64 // per key; each of the first two rotations adds one
	SecretMonth                                  float64 // Secrets Manager
	WSMessagePerMillion, WSConnMinutePerMillion  float64 // API Gateway WebSocket (first 1B messages)
	HTTPPerMillion                               float64 // API Gateway HTTP API (first 300M)
	LambdaPerMillion, LambdaGBSecondArm          float64
	LogsIngestGB, AlarmMonth                     float64 // CloudWatch
	TransferOutGB                                float64 // to the internet, first 10 TB
	NATGatewayHour, NATGatewayGB, PublicIPv4Hour float64
	T4gNanoHour, GP3GBMonth                      float64
	// S3 Standard (media): storage (first 50 TB), PUT/COPY/POST/LIST and
	// GET/HEAD requests per 1,000 (DELETE is free); transfer out of S3 to
	// the internet is TransferOutGB.
	S3GBMonth, S3PutPerThousand, S3GetPerThousand float64
}{
	ACUHour: 0.12, StorageGBMonth: 0.10, IOPerMillion: 0.20,
	KMSKeyMonth: 1.00, KMSRotationMonth: 1.00,
	SecretMonth:         0.40,
	WSMessagePerMillion: 1.00, WSConnMinutePerMillion: 0.25,
	HTTPPerMillion:   1.00,
	LambdaPerMillion: 0.20, LambdaGBSecondArm: 0.0000133334,
	LogsIngestGB: 0.50, AlarmMonth: 0.10,
	TransferOutGB:  0.09,
	NATGatewayHour: 0.045, NATGatewayGB: 0.045, PublicIPv4Hour: 0.005,
	T4gNanoHour: 0.0042, GP3GBMonth: 0.08,
	S3GBMonth: 0.023, S3PutPerThousand: 0.005, S3GetPerThousand: 0.0004,
}

// Per-request assumptions (see docs/deploy.md): function time at 512 MB,
// Aurora I/Os, log bytes.
const (
	hoursPerMonth  = 730
	lambdaGB       = 0.5
	messageSeconds = 0.040 // ws-message per client message
	querySeconds   = 0.050 // query per HTTP query
	ioPerMessage   = 5
	ioPerQuery     = 2
	logBytesPerInv = 300
	// alarms of profile=managed: errors and throttles of six functions,
	// and HTTP 5xx.
	managedAlarms = 13
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

// Usage is one month of traffic.
type Usage struct {
	Profile string
	Egress  string // ipv6, nat-gateway or nat-instance; "" = the profile's
	// DBHours the database is awake (not paused) at DBACU on average.
	DBHours, DBACU float64
	// Messages is client WebSocket messages; REQs of them are REQs, each
	// answered with EventsPerReq stored events and an EOSE; every other
	// message gets one reply (OK, CLOSED, NOTICE, AUTH...). Fanout is live
	// deliveries of events to other subscribers.
	Messages, REQs, EventsPerReq, Fanout float64
	ConnMinutes                          float64
	Queries                              float64 // HTTP POST /query, /count, /events
	StoredGB                             float64
	SentKB                               float64 // average sent message / response
	KeyYear                              int     // age of the KMS key, in years (1 = first year)
	// Media: GB stored in S3 on average over the month, uploads and
	// downloads of blobs of MediaMB on average.
	MediaGB, MediaUploads, MediaDownloads, MediaMB float64
}

// Line is one item of the bill.
type Line struct {
	Item string
	USD  float64
}

// profileDefaults are what infra/settings.go's profiles deploy.
var profileDefaults = map[string]struct {
	egress   string
	rotation bool
	alarms   int
}{
	"community": {"ipv6", false, 0},
	"managed":   {"nat-gateway", true, managedAlarms},
}

// Bill computes the month for u.
func Bill(u Usage) ([]Line, error) {
	pd, ok := profileDefaults[u.Profile]
	if !ok {
		return nil, fmt.Errorf("profile must be community or managed, got %q", u.Profile)
	}
	egress := u.Egress
	if egress == "" {
		egress = pd.egress
	}
	p := prices
	var out []Line
	add := func(usd float64, format string, a ...any) {
		out = append(out, Line{fmt.Sprintf(format, a...), usd})
	}
	m := func(n float64) string { return fmt.Sprintf("%.3gM", n/1e6) }

	// Network.
	sent := u.REQs*(u.EventsPerReq+1) + (u.Messages - u.REQs) + u.Fanout
	outGB := (sent + u.Queries) * u.SentKB / 1e6
	// Media bytes that pass a function: every upload is read once (a
	// direct body, or the staged object to verify it); downloads go from
	// S3 to the client and never do.
	mediaInGB := u.MediaUploads * u.MediaMB / 1e3
	mediaOutGB := u.MediaDownloads * u.MediaMB / 1e3
	mediaReqs := u.MediaUploads*requestsPerUpload + u.MediaDownloads
	switch egress {
	case "ipv6":
		add(0, "egress-only internet gateway (IPv6, no hourly charge)")
	case "nat-gateway":
		add(hoursPerMonth*p.NATGatewayHour, "NAT gateway %d h x $%.3f", hoursPerMonth, p.NATGatewayHour)
		add(hoursPerMonth*p.PublicIPv4Hour, "NAT public IPv4 %d h x $%.3f", hoursPerMonth, p.PublicIPv4Hour)
		add((outGB+mediaInGB)*p.NATGatewayGB, "NAT processing %.2f GB x $%.3f", outGB+mediaInGB, p.NATGatewayGB)
	case "nat-instance":
		add(hoursPerMonth*p.T4gNanoHour, "NAT instance t4g.nano %d h x $%.4f", hoursPerMonth, p.T4gNanoHour)
		add(8*p.GP3GBMonth, "NAT instance 8 GB gp3 x $%.2f", p.GP3GBMonth)
		add(hoursPerMonth*p.PublicIPv4Hour, "NAT public IPv4 %d h x $%.3f", hoursPerMonth, p.PublicIPv4Hour)
		add(p.AlarmMonth, "NAT instance recovery alarm")
	default:
		return nil, fmt.Errorf("egress must be ipv6, nat-gateway or nat-instance, got %q", egress)
	}
	add(outGB*p.TransferOutGB, "data transfer out %.2f GB x $%.2f", outGB, p.TransferOutGB)

	// Media in S3 ($0 with nothing stored and no traffic).
	add(u.MediaGB*p.S3GBMonth, "S3 media storage %.1f GB-month x $%.3f", u.MediaGB, p.S3GBMonth)
	puts := u.MediaUploads * putsPerUpload
	add(puts/1e3*p.S3PutPerThousand, "S3 PUT/COPY requests %s x $%.3f/1000", m(puts), p.S3PutPerThousand)
	gets := u.MediaUploads*getsPerUpload + u.MediaDownloads
	add(gets/1e3*p.S3GetPerThousand, "S3 GET requests %s x $%.4f/1000", m(gets), p.S3GetPerThousand)
	add(mediaOutGB*p.TransferOutGB, "S3 media transfer out %.2f GB x $%.2f", mediaOutGB, p.TransferOutGB)

	// Database.
	add(u.DBHours*u.DBACU*p.ACUHour, "Aurora compute %.0f h awake x %.1f ACU x $%.2f ($0 while paused)", u.DBHours, u.DBACU, p.ACUHour)
	add(u.StoredGB*p.StorageGBMonth, "Aurora storage %.1f GB x $%.2f (backups up to that size free)", u.StoredGB, p.StorageGBMonth)
	io := u.Messages*ioPerMessage + u.Queries*ioPerQuery
	add(io/1e6*p.IOPerMillion, "Aurora I/O %s x $%.2f/M", m(io), p.IOPerMillion)

	// Keys and secrets.
	rotations := 0
	if pd.rotation {
		rotations = min(max(u.KeyYear-1, 0), 2)
	}
	add(p.KMSKeyMonth+float64(rotations)*p.KMSRotationMonth, "KMS key $%.2f + %d rotation(s) x $%.2f (year %d)", p.KMSKeyMonth, rotations, p.KMSRotationMonth, u.KeyYear)
	add(p.SecretMonth, "Secrets Manager master secret (migrate only)")

	// APIs and functions.
	ws := u.Messages + sent
	add(ws/1e6*p.WSMessagePerMillion, "WebSocket messages %s received + %s sent x $%.2f/M", m(u.Messages), m(sent), p.WSMessagePerMillion)
	add(u.ConnMinutes/1e6*p.WSConnMinutePerMillion, "WebSocket connection minutes %s x $%.2f/M", m(u.ConnMinutes), p.WSConnMinutePerMillion)
	httpReqs := u.Queries + mediaReqs
	add(httpReqs/1e6*p.HTTPPerMillion, "HTTP API requests %s x $%.2f/M", m(httpReqs), p.HTTPPerMillion)
	inv := u.Messages + httpReqs
	add(inv/1e6*p.LambdaPerMillion, "Lambda requests %s x $%.2f/M", m(inv), p.LambdaPerMillion)
	gbs := (u.Messages*messageSeconds + httpReqs*querySeconds + mediaInGB*hashSecondsPerGB) * lambdaGB
	add(gbs*p.LambdaGBSecondArm, "Lambda %.0f GB-s x $%.10f (arm64)", gbs, p.LambdaGBSecondArm)
	logGB := inv * logBytesPerInv / 1e9
	add(logGB*p.LogsIngestGB, "CloudWatch Logs %.2f GB x $%.2f", logGB, p.LogsIngestGB)
	if pd.alarms > 0 {
		add(float64(pd.alarms)*p.AlarmMonth, "CloudWatch alarms %d x $%.2f", pd.alarms, p.AlarmMonth)
	}
	add(0, "AWS Budgets (-c budgetUSD): the first two budgets are free")
	return out, nil
}

// Total is the sum of the lines, in cents as printed.
func Total(lines []Line) float64 {
	t := 0.0
	for _, l := range lines {
		t += l.USD
	}
	return t
}

// Print writes the bill, one line per item and the total last.
func Print(w io.Writer, u Usage, lines []Line) {
	fmt.Fprintf(w, "profile %s, us-east-1 list prices of %s (S3 %s), %d-hour month, no free tier\n", u.Profile, PricesDate, S3PricesDate, hoursPerMonth)
	for _, l := range lines {
		fmt.Fprintf(w, "  %-86s $%8.2f\n", l.Item, l.USD)
	}
	fmt.Fprintf(w, "total: $%.2f/month\n", Total(lines))
}

func main() {
	var u Usage
	flag.StringVar(&u.Profile, "profile", "community", "community or managed")
	flag.StringVar(&u.Egress, "egress", "", "ipv6, nat-gateway or nat-instance (default: the profile's)")
	flag.Float64Var(&u.DBHours, "db-hours", 0, "hours a month the database is awake")
	flag.Float64Var(&u.DBACU, "db-acu", 0.5, "average ACU while awake")
	flag.Float64Var(&u.Messages, "messages", 0, "client WebSocket messages a month")
	flag.Float64Var(&u.REQs, "reqs", 0, "how many of -messages are REQs")
	flag.Float64Var(&u.EventsPerReq, "events-per-req", 0, "stored events returned per REQ (each REQ is N+1 sent messages)")
	flag.Float64Var(&u.Fanout, "fanout", 0, "live deliveries to other subscribers a month")
	flag.Float64Var(&u.ConnMinutes, "conn-minutes", 0, "WebSocket connection minutes a month")
	flag.Float64Var(&u.Queries, "queries", 0, "HTTP API requests a month")
	flag.Float64Var(&u.StoredGB, "gb", 1, "Aurora storage, GB")
	flag.Float64Var(&u.SentKB, "kb", 1, "average KB per sent message or HTTP response")
	flag.IntVar(&u.KeyYear, "key-year", 3, "age of the KMS key in years (rotation surcharges from year 2)")
	flag.Float64Var(&u.MediaGB, "media-gb", 0, "media blobs stored in S3, GB on average over the month")
	flag.Float64Var(&u.MediaUploads, "media-uploads", 0, "media uploads a month")
	flag.Float64Var(&u.MediaDownloads, "media-downloads", 0, "media downloads a month (each sends -media-mb out of S3)")
	flag.Float64Var(&u.MediaMB, "media-mb", 1, "average size of an uploaded or downloaded blob, MB")
	flag.Parse()
	if u.REQs > u.Messages {
		fmt.Fprintln(os.Stderr, "cost: -reqs cannot exceed -messages")
		os.Exit(2)
	}
	if u.MediaGB < 0 || u.MediaUploads < 0 || u.MediaDownloads < 0 || u.MediaMB < 0 {
		fmt.Fprintln(os.Stderr, "cost: media figures cannot be negative")
		os.Exit(2)
	}
	if u.KeyYear < 1 {
		fmt.Fprintln(os.Stderr, "cost: -key-year starts at 1")
		os.Exit(2)
	}
	lines, err := Bill(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(2)
	}
	var b strings.Builder
	Print(&b, u, lines)
	fmt.Print(b.String())
}
