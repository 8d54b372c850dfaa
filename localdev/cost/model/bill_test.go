package model

import (
	"math"
	"strings"
	"testing"
)

func line(t *testing.T, lines []Line, prefix string) float64 {
	t.Helper()
	for _, l := range lines {
		if strings.HasPrefix(l.Item, prefix) {
			return l.USD
		}
	}
	t.Fatalf("no line %q", prefix)
	return 0
}

// idle is the usage of the idle bill: no traffic, 1 GB stored, the key in
// its third year, the code's design and posting.
var idle = Usage{Design: "current", DBACU: 0.5, StoredGB: 1, SentKB: 1, KeyYear: 3,
	Clients: Clients{Subscriptions: 2}, Posting: Posting{PostSeconds: 0.020, InFlight: 1}}

func bill(t *testing.T, profile, egress string, u Usage) ([]Line, Lifecycle) {
	t.Helper()
	s, err := Assumed(profile, egress)
	if err != nil {
		t.Fatal(err)
	}
	lines, life, err := Bill(u, s, USEast1)
	if err != nil {
		t.Fatal(err)
	}
	return lines, life
}

// livenessIdle is what the liveness ticks add to a profile's bill with
// nobody connected (design current: no S3 request): 87,600 runs of 30 ms
// at 128 MB and their 300-byte log lines, and the delay queue's 657,000
// idle polls plus 3 requests per delayed tick (issue 37).
const livenessIdle = 87600*0.20/1e6 + 87600*0.030*0.125*0.0000133334 + 87600*300/1e9*0.50 + (657000+3*43800)*0.40/1e6

// sweepIdle is what the daily NIP-40 expiry sweep adds (issue 40): 730/24
// resumes of a paused Aurora, each awake 15 s + 60 s until the server
// closes the frozen function's connection + the 300 s auto-pause, at 0.5
// ACU x $0.12 (nothing when the database is awake all month anyway).
const sweepIdle = 730.0 / 24 * (15 + 60 + 300) / 3600 * 0.5 * 0.12

func TestBill(t *testing.T) {
	with := func(f func(*Usage)) Usage { u := idle; f(&u); return u }
	for _, c := range []struct {
		name, profile, egress string
		u                     Usage
		total                 float64
		lines                 map[string]float64
	}{
		// The goal of issue 8: an idle community relay under $3 a month
		// (with the three alarms of every profile, $0.30: issue 41's two and the push dead-letter queue's).
		{"community idle", "community", "", idle, 1.80 + livenessIdle + sweepIdle, map[string]float64{"egress-only": 0, "Aurora compute, modelled": 0, "KMS key": 1.00, "Secrets Manager": 0.40, "Aurora storage": 0.10,
			"liveness delay queue": (657000 + 3*43800) * 0.40 / 1e6, "liveness ticks: S3": 0, "liveness frames": 0}},
		// managed: NAT gateway + IPv4, 23 alarms (errors and throttles of
		// ten functions, Aurora awake, HTTP 5xx, push given up), key with two rotations.
		{"managed idle", "managed", "", idle, 42.30 + livenessIdle + sweepIdle,
			map[string]float64{"NAT gateway": 32.85, "public IPv4": 3.65, "CloudWatch alarms": 2.30, "KMS key": 3.00}},
		{"managed first year", "managed", "", with(func(u *Usage) { u.KeyYear = 1 }), 40.30 + livenessIdle + sweepIdle, map[string]float64{"KMS key": 1.00}},
		{"managed second year", "managed", "", with(func(u *Usage) { u.KeyYear = 2 }), 41.30 + livenessIdle + sweepIdle, map[string]float64{"KMS key": 2.00}},
		{"nat-instance", "community", "nat-instance", idle, 1.80 + livenessIdle + sweepIdle + 3.066 + 0.64 + 3.65 + 0.10,
			map[string]float64{"NAT instance t4g.nano": 3.066, "NAT instance recovery alarm": 0.10}},
		// Awake all month at 0.5 ACU.
		{"awake", "community", "", with(func(u *Usage) { u.DBHours = 730 }), 1.80 + livenessIdle + 43.80, map[string]float64{"Aurora compute 730 h": 43.80}},
		// A REQ answered with 9 stored events is 10 sent messages: 1M
		// REQs = 1M received + 10M sent; posted one after another at
		// 20 ms, each runs 15 + 10 x 20 ms at 512 MB: 107,500 GB-s.
		{"1M REQs of 9 events", "community", "", with(func(u *Usage) { u.Messages = 1e6; u.REQs = 1e6; u.EventsPerReq = 9 }), math.NaN(),
			map[string]float64{"WebSocket messages": 11.00, "data transfer out": 0.90, "Lambda requests": 0.20, "Lambda 107500 GB-s": 107500 * 0.0000133334, "Aurora I/O": 0.80}},
		// Five posts in flight: 15 + 2 x 20 ms.
		{"1M REQs of 9 events, 5 in flight", "community", "", with(func(u *Usage) {
			u.Messages = 1e6
			u.REQs = 1e6
			u.EventsPerReq = 9
			u.Posting.InFlight = 5
		}), math.NaN(), map[string]float64{"Lambda 27500 GB-s": 27500 * 0.0000133334}},
		// 1M EVENTs: one OK each (20 + 20 ms), plus 2M live deliveries.
		{"1M events, fanout 2", "community", "", with(func(u *Usage) { u.Messages = 1e6; u.Fanout = 2e6 }), math.NaN(),
			map[string]float64{"WebSocket messages": 4.00, "Lambda 20000 GB-s": 0.266668}},
		{"1M queries", "community", "", with(func(u *Usage) { u.Queries = 1e6 }), math.NaN(),
			map[string]float64{"HTTP API requests": 1.00, "Lambda 25000 GB-s": 0.333335, "CloudWatch Logs 0.30": 0.15, "Aurora I/O": 0.40}},
		{"connection minutes", "community", "", with(func(u *Usage) { u.ConnMinutes = 43800 }), 1.80 + livenessIdle + sweepIdle + 0.01095, map[string]float64{"WebSocket connection minutes": 0.01095}},
		{"stored GB", "community", "", with(func(u *Usage) { u.StoredGB = 20 }), 3.70 + livenessIdle + sweepIdle, nil},
		// Issue 30: media costs nothing idle; the idle bill stays as it is.
		{"media idle", "community", "", with(func(u *Usage) { u.MediaMB = 2 }), 1.80 + livenessIdle + sweepIdle,
			map[string]float64{"S3 media storage": 0, "S3 PUT/COPY requests": 0, "S3 GET requests": 0, "S3 media transfer out": 0}},
		// 100 GB stored all month: $2.30, nothing else.
		{"media stored", "community", "", with(func(u *Usage) { u.MediaGB = 100 }), 1.80 + livenessIdle + sweepIdle + 2.30, map[string]float64{"S3 media storage 100.0 GB-month": 2.30}},
		// 10,000 uploads of 2 MB: 20,000 PUT/COPY ($0.10), 10,000 verifying
		// GETs ($0.004), 20,000 HTTP requests and function runs, 20 GB
		// hashed (200 s) on top of 0.05 s per request: (1000 + 200) s x
		// 0.5 GB = 600 GB-s; no transfer out.
		{"media uploads", "community", "", with(func(u *Usage) { u.MediaUploads = 1e4; u.MediaMB = 2 }), math.NaN(),
			map[string]float64{"S3 PUT/COPY requests": 0.10, "S3 GET requests": 0.004, "S3 media transfer out": 0,
				"HTTP API requests": 0.02, "Lambda requests": 0.004, "Lambda 600 GB-s": 600 * 0.0000133334}},
		// 1M downloads of 1 MB: 1M presigned GETs ($0.40) and 1,000 GB out
		// of S3 ($90), 1M redirects (HTTP API and Lambda).
		{"media downloads", "community", "", with(func(u *Usage) { u.MediaDownloads = 1e6; u.MediaMB = 1 }), math.NaN(),
			map[string]float64{"S3 GET requests": 0.40, "S3 media transfer out 1000.00 GB": 90.00, "S3 PUT/COPY requests": 0,
				"HTTP API requests": 1.00, "Lambda requests": 0.20, "data transfer out": 0}},
		// Behind a NAT gateway every uploaded byte is processed once (the
		// function reads it); downloads bypass the functions.
		{"media behind NAT", "community", "nat-gateway", with(func(u *Usage) { u.MediaUploads = 1e3; u.MediaDownloads = 1e5; u.MediaMB = 10 }), math.NaN(),
			map[string]float64{"NAT processing 10.00 GB": 0.45}},
		// Awake all month by hand: the modelled wakes add nothing.
		{"awake and connected", "community", "", with(func(u *Usage) { u.DBHours = 730; u.Clients.N = 1 }), math.NaN(),
			map[string]float64{"Aurora compute 730 h": 43.80, "Aurora compute, modelled wakes": 0}},
		// Issue 31's goal: under $3 with nobody connected, and with one
		// always-open client once its reconnects need no database.
		{"1 connected, lastcommit", "community", "", with(func(u *Usage) { u.Design = "lastcommit"; u.Clients.N = 1 }), math.NaN(),
			map[string]float64{"Aurora compute, modelled wakes: 0 resumes": 0, "WebSocket connection minutes 0.0438M": 0.01095}},
		// Issue 37: one always-open client gets 87,600 liveness frames a
		// month, listed by 87,600 LISTs while it is open.
		{"1 connected, liveness", "community", "", with(func(u *Usage) { u.Design = "lastcommit"; u.Clients.N = 1 }), math.NaN(),
			map[string]float64{"liveness frames: 0.0876M to 1": 0.0876, "liveness ticks: S3 0.0876M GET": 87600*0.0004/1e3 + 87600*0.005/1e3}},
		// Issue 37, the sessions in DynamoDB: one always-open client with
		// NDK's heartbeat every 2 minutes wakes Aurora never; its
		// liveness ticks are one Query (one read unit) each, and its
		// session's writes and reads are priced per request unit.
		{"1 connected, dynamodb, NDK heartbeat", "community", "", with(func(u *Usage) {
			u.Design = "dynamodb"
			u.Clients.N, u.Clients.HeartbeatMinutes = 1, 2
		}), math.NaN(),
			map[string]float64{"Aurora compute, modelled wakes: 0 resumes": 0, "liveness ticks: DynamoDB 0.0876M read units": 87600 * 0.125 / 1e6}},
		// The code as it is: every 10-minute reconnect wakes Aurora for
		// 15 + 60 + 300 s: 4380 x 375 s = 456.25 h at 0.5 ACU.
		{"1 connected, current", "community", "", with(func(u *Usage) { u.Clients.N = 1 }), math.NaN(),
			map[string]float64{"Aurora compute, modelled wakes: 4380 resumes, 456.2 h": 456.25 * 0.5 * 0.12}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines, _ := bill(t, c.profile, c.egress, c.u)
			for prefix, want := range c.lines {
				if got := line(t, lines, prefix); math.Abs(got-want) > 1e-6 {
					t.Errorf("%s = %.6f, want %.6f", prefix, got, want)
				}
			}
			if !math.IsNaN(c.total) && math.Abs(Total(lines)-c.total) > 1e-6 {
				t.Errorf("total %.4f, want %.4f", Total(lines), c.total)
			}
		})
	}
	if _, err := Assumed("enterprise", ""); err == nil {
		t.Error("unknown profile accepted")
	}
	if _, err := Assumed("community", "vpn"); err == nil {
		t.Error("unknown egress accepted")
	}
	s, _ := Assumed("community", "")
	if _, _, err := Bill(with(func(u *Usage) { u.Design = "other" }), s, USEast1); err == nil {
		t.Error("unknown design accepted")
	}
	s.Functions = s.Functions[:1]
	if _, _, err := Bill(idle, s, USEast1); err == nil {
		t.Error("a stack without the design's functions accepted")
	}
}

// TestGoals: the idle bill and one always-open client stay under $3 with
// the sessions' state in DynamoDB (issue 37's goal; in S3 issue 31's, now
// $0.11 over it); ten silent clients pass $3
// on S3 requests and WebSocket messages alone (no wake); with the state in
// the database the bill stays under $3 only idle.
func TestGoals(t *testing.T) {
	for _, c := range []struct {
		design string
		n      int
		under3 bool
	}{
		{"current", 0, true},
		{"lastcommit", 0, true},
		// The former S3 design passes $3 with one client since every
		// profile pays issue 41's two alarms and issue 40's daily sweep
		// ($0.36); the design that ships is dynamodb.
		{"lastcommit", 1, false},
		{"lastcommit", 10, false},
		{"dynamodb", 1, true},
		{"current", 1, false},
	} {
		u := idle
		u.Design, u.Clients.N = c.design, c.n
		lines, _ := bill(t, "community", "", u)
		if got := Total(lines) < 3; got != c.under3 {
			t.Errorf("%s, %d connected: total $%.2f, under $3 %v, want %v", c.design, c.n, Total(lines), got, c.under3)
		}
	}
}

// TestMinCapacity: with a minimum above 0 Aurora never pauses, whatever
// the clients do.
func TestMinCapacity(t *testing.T) {
	s, _ := Assumed("community", "")
	s.Database.MinACU = 1
	lines, _, err := Bill(idle, s, USEast1)
	if err != nil {
		t.Fatal(err)
	}
	if got := line(t, lines, "Aurora compute 1 instance(s) x 730 h x 1.0 ACU"); math.Abs(got-87.60) > 1e-9 {
		t.Errorf("compute %.2f, want 87.60", got)
	}
}

// TestNIP11PolledEveryMinuteAddsNoAuroraHours: NIP-11 fetched every
// minute (43,800 GETs a month) wakes no Aurora where the directory is kept
// (design lastcommit, the stack's bucket: one S3 GET each), and keeps it
// awake the whole month where the registry asks the database (current).
func TestNIP11PolledEveryMinuteAddsNoAuroraHours(t *testing.T) {
	for _, c := range []struct {
		design string
		hours  float64
	}{{"lastcommit", 0}, {"current", HoursPerMonth}} {
		u := idle
		u.Design, u.Clients.NIP11PollMinutes = c.design, 1
		lines, life := bill(t, "community", "", u)
		if life.Count[ActNIP11] != 43800 {
			t.Errorf("%s: %g NIP-11 fetches a month, want 43800", c.design, life.Count[ActNIP11])
		}
		if got := line(t, lines, "Aurora compute, modelled"); math.Abs(got-c.hours*0.5*USEast1.ACUHour) > 0.005 {
			t.Errorf("%s: NIP-11 polled every minute: Aurora $%.2f, want %g h ($%.2f)", c.design, got, c.hours, c.hours*0.5*USEast1.ACUHour)
		}
		if got := line(t, lines, "HTTP API requests"); math.Abs(got-43800*USEast1.HTTPPerMillion/1e6) > 0.005 {
			t.Errorf("%s: HTTP API requests $%.2f, want 43,800 of them", c.design, got)
		}
	}
}
