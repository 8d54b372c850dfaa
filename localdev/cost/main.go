// Command cost prints the monthly AWS bill of one relay stack, line by
// line, from the us-east-1 list prices of localdev/cost/model, the stack's
// billable resources (the profile's as the model assumes them, which
// infra's TestCostModelMatchesTemplate checks against the synthesized
// template, or any template given with -template) and the usage given by
// flags; with no usage flags it is the idle bill of the profile.
//
//	go run ./localdev/cost                       # community, idle
//	go run ./localdev/cost -profile managed
//	go run ./localdev/cost -connected 1          # one always-open client
//	go run ./localdev/cost -connected 10 -design lastcommit -heartbeat 2
//	go run ./localdev/cost -nip11-every 1        # NIP-11 polled every minute
//	go run ./localdev/cost -messages 1e6 -reqs 2e5 -events-per-req 20 -db-hours 100
//	go run ./localdev/cost -media-gb 50 -media-uploads 2e4 -media-downloads 5e5 -media-mb 2
//	go run ./localdev/cost -template infra/cdk.out/BuzzRelay-default.template.json
//	go run ./localdev/cost -domain -dns-queries 1e6  # -c domain, its zone in Route 53
//	go run ./localdev/cost -auto-pause 3600 -connected 1  # a longer auto-pause
//	go run ./localdev/cost -client ndk -connected 10  # from ndk's recorded idle session
//
// With -client (buzz, ndk, welshman or nostr-tools) the -connected
// clients are priced from that library's idle session as recorded against
// the relay (localdev/cost/profiles/<client>.json: messages each way,
// function runs, AWS requests, database statements and when they ran),
// not from the design table; record them again with
// `make record-profiles` (localdev/e2e's TestRecordIdleProfiles).
//
// Before the bill it prints its assumptions: the design table (what each
// client action costs) and, with -connected, the month of those clients.
// The last line is `total: $N.NN/month`. docs/deploy.md's cost tables are
// its output. Free tiers are left out; a month is 730 hours.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/buzzrelay/relay/localdev/cost/model"
)

// Print writes the assumptions, the bill, one line per item, and the
// total last.
func Print(w io.Writer, profile string, s model.Stack, u model.Usage, life model.Lifecycle, lines []model.Line) {
	fmt.Fprintf(w, "profile %s, egress %s, us-east-1 list prices of %s (S3 %s), %d-hour month, no free tier\n",
		profile, s.Network.Egress, model.PricesDate, model.S3PricesDate, model.HoursPerMonth)
	d := model.Designs[u.Design]
	fmt.Fprintf(w, "design %s: %s\n", d.Name, d.About)
	for _, n := range d.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintf(w, "  posts: %.0f ms each, %.0f in flight (a REQ's stored events go out one after another)\n", u.Posting.PostSeconds*1000, u.Posting.InFlight)
	fmt.Fprintf(w, "  %-16s %-14s %8s %9s %6s %8s %6s %6s %6s %6s %6s\n", "action", "function", "runs", "ms", "recv", "posts", "DB", "S3 GET", "S3 PUT", "DDB R", "DDB W")
	for _, name := range model.ActionOrder {
		a := d.Actions[name]
		db := "-"
		if a.DBTrips > 0 {
			db = fmt.Sprintf("%g wake", a.DBTrips)
		}
		fmt.Fprintf(w, "  %-16s %-14s %8g %9.0f %6g %8g %6s %6g %6g %6g %6g\n", name, a.Function, a.Invocations,
			u.Posting.Seconds(a, 0)*1000, a.Received, a.Posts, db, a.S3Gets, a.S3Puts, a.DDBReads, a.DDBWrites)
	}
	db := s.Database
	tail := "no idle_session_timeout: a frozen Lambda environment keeps its connection, so Aurora never pauses"
	if db.ServerIdleSeconds > 0 {
		tail = fmt.Sprintf("until the server closes the last connection (idle_session_timeout %g s after the last statement: Lambda freezes the environment after each run, so the pool's own %g s idle check does not run)", db.ServerIdleSeconds, db.PoolIdleSeconds)
	}
	fmt.Fprintf(w, "  a wake: Aurora resumes (%d s), stays %s and pauses %g s after (SecondsUntilAutoPause): at least %.0f s at %.1f ACU billed per second\n",
		model.ResumeSeconds, tail, db.AutoPauseSeconds, db.WakeSeconds(), max(u.DBACU, db.MinACU))
	c := u.Clients
	if c.N > 0 {
		beat := "sends nothing while idle (API Gateway drops the socket after 10 min)"
		if c.HeartbeatMinutes > 0 {
			beat = fmt.Sprintf("sends a heartbeat after %g min of silence", c.HeartbeatMinutes)
		}
		fmt.Fprintf(w, "connected: %d always-open client(s), %d subscription(s) each, no other traffic; each %s\n", c.N, c.Subscriptions, beat)
		fmt.Fprintf(w, "  a socket lives %g min (API Gateway: idle 10 min, at most 2 h), then the client reconnects at once: %.0f sockets a month\n", life.SessionMinutes, life.Sessions)
		var per []string
		for _, name := range model.ActionOrder {
			if n := life.PerSession[name]; n > 0 {
				per = append(per, fmt.Sprintf("%s x%g", name, n))
			}
		}
		fmt.Fprintf(w, "  per socket: %s\n", strings.Join(per, ", "))
		fmt.Fprintf(w, "  database: %d bursts of statements, %d resumes, %.1f h awake (sockets spread evenly: the most awake time)\n", life.Bursts, life.Resumes, life.AwakeSeconds/3600)
	}
	if c.NIP11PollMinutes > 0 {
		wakes := "no database statement"
		if d.Actions[model.ActNIP11].DBTrips > 0 {
			wakes = fmt.Sprintf("%g database round trip(s) each (with every modelled wake: %d resumes, %.1f h awake)", d.Actions[model.ActNIP11].DBTrips, life.Resumes, life.AwakeSeconds/3600)
		}
		fmt.Fprintf(w, "nip-11: fetched every %g min, %.0f times a month: %s\n", c.NIP11PollMinutes, life.Count[model.ActNIP11], wakes)
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %-100s $%8.2f\n", l.Item, l.USD)
	}
	fmt.Fprintf(w, "total: $%.2f/month\n", model.Total(lines))
}

// PrintClients writes the recorded profile's assumptions, the bill, one
// line per item, and the total last.
func PrintClients(w io.Writer, profile string, s model.Stack, pr model.Profile, m model.ClientMonth, lines []model.Line) {
	fmt.Fprintf(w, "profile %s, egress %s, us-east-1 list prices of %s (S3 %s), %d-hour month, no free tier\n",
		profile, s.Network.Egress, model.PricesDate, model.S3PricesDate, model.HoursPerMonth)
	fmt.Fprintf(w, "client %s (%s), recorded %s idle for %.0f s with the liveness tick every %g s: %s\n",
		pr.Client, pr.Library, pr.Recorded, pr.IdleSeconds, pr.LivenessSeconds, pr.Command)
	ph := func(name string, x model.Phase, per float64) {
		fmt.Fprintf(w, "  %-14s %6.1f connects %7.1f messages in %7.1f frames out %7.1f statements  AWS %v\n", name, x.Connects*per, x.MessagesIn*per, x.FramesOut*per, x.Statements*per, scaled(x.AWS, per))
	}
	ph("start", pr.Start, 1)
	ph("idle, an hour", pr.Idle, 3600/pr.IdleSeconds)
	ph("end", pr.End, 1)
	again := "by itself"
	if !pr.Reconnects {
		again = "not by itself: a new socket is priced as end and start"
	}
	ph("reconnect", pr.Reconnect, 1)
	fmt.Fprintf(w, "  reconnect: after the relay closed its socket (API Gateway: every 2 h), %s\n", again)
	fmt.Fprintf(w, "  idle statement bursts at %v s of %.0f; each liveness tick %v\n", pr.IdleBursts, pr.IdleSeconds, pr.TickAWS)
	fmt.Fprintf(w, "connected: %d always-open client(s); a socket lives %.0f min, then the client reconnects at once: %.0f sockets a month\n", m.N, m.SessionMinutes, m.Sessions)
	fmt.Fprintf(w, "  database: %d bursts of statements, %d resumes, %.1f h awake (sockets spread evenly)\n", m.Bursts, m.Resumes, m.AwakeSeconds/3600)
	for _, l := range lines {
		fmt.Fprintf(w, "  %-100s $%8.2f\n", l.Item, l.USD)
	}
	fmt.Fprintf(w, "total: $%.2f/month\n", model.Total(lines))
}

func scaled(m map[string]float64, by float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = float64(int(v*by*10+0.5)) / 10
	}
	return out
}

// ProfilesDir is where the recorded profiles live, relative to the
// repository's root.
const ProfilesDir = "localdev/cost/profiles"

// readProfile reads client's recorded profile, looked for from the working
// directory upwards.
func readProfile(client string) (model.Profile, error) {
	wd, err := os.Getwd()
	if err != nil {
		return model.Profile{}, err
	}
	for d := wd; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, ProfilesDir, client+".json"))
		if err == nil {
			return model.ParseProfile(b)
		}
		if filepath.Dir(d) == d {
			return model.Profile{}, fmt.Errorf("no recorded profile %s/%s.json in %s or above (clients: buzz, ndk, welshman, nostr-tools)", ProfilesDir, client, wd)
		}
	}
}

func main() {
	var u model.Usage
	var profile, egress, template, client string
	flag.StringVar(&client, "client", "", "price -connected clients from this library's recorded idle session: buzz, ndk, welshman or nostr-tools")
	flag.StringVar(&profile, "profile", "community", "community or managed")
	flag.StringVar(&egress, "egress", "", "ipv6, nat-gateway or nat-instance (default: the profile's)")
	flag.StringVar(&template, "template", "", "a synthesized template (cdk.out/*.template.json) to read the stack from, instead of the profile's")
	flag.StringVar(&u.Design, "design", "dynamodb", "how the WebSocket path is served: "+strings.Join(model.DesignNames(), " or "))
	flag.Float64Var(&u.DBHours, "db-hours", 0, "hours a month the database is awake besides the modelled wakes")
	flag.Float64Var(&u.DBACU, "db-acu", 0.5, "average ACU while awake")
	flag.Float64Var(&u.Messages, "messages", 0, "client WebSocket messages a month")
	flag.Float64Var(&u.REQs, "reqs", 0, "how many of -messages are REQs")
	flag.Float64Var(&u.EventsPerReq, "events-per-req", 0, "stored events returned per REQ (each REQ is N+1 sent messages)")
	flag.Float64Var(&u.Fanout, "fanout", 0, "live deliveries to other subscribers a month")
	flag.Float64Var(&u.Pushes, "pushes", 0, "push notifications a month (NIP-9a callbacks, NIP-PL wakes: one push sender run each)")
	flag.Float64Var(&u.ConnMinutes, "conn-minutes", 0, "WebSocket connection minutes a month besides -connected")
	flag.Float64Var(&u.Queries, "queries", 0, "HTTP API requests a month")
	flag.Float64Var(&u.StoredGB, "gb", 1, "Aurora storage, GB")
	flag.Float64Var(&u.SentKB, "kb", 1, "average KB per sent message or HTTP response")
	flag.IntVar(&u.KeyYear, "key-year", 3, "age of the KMS key in years (rotation surcharges from year 2)")
	flag.Float64Var(&u.MediaGB, "media-gb", 0, "media blobs stored in S3, GB on average over the month")
	flag.Float64Var(&u.MediaUploads, "media-uploads", 0, "media uploads a month")
	flag.Float64Var(&u.MediaDownloads, "media-downloads", 0, "media downloads a month (each sends -media-mb out of S3)")
	flag.Float64Var(&u.MediaMB, "media-mb", 1, "average size of an uploaded or downloaded blob, MB")
	flag.IntVar(&u.Clients.N, "connected", 0, "always-open WebSocket clients (reconnecting whenever API Gateway closes their socket)")
	flag.IntVar(&u.Clients.Subscriptions, "subs", 2, "REQs each -connected client holds")
	flag.Float64Var(&u.Clients.HeartbeatMinutes, "heartbeat", 0, "minutes of silence after which a -connected client sends a heartbeat (NDK: 2); 0 sends none")
	flag.Float64Var(&u.Clients.NIP11PollMinutes, "nip11-every", 0, "minutes between NIP-11 fetches (a monitor or client polling GET / with Accept: application/nostr+json); 0: none")
	domain := flag.Bool("domain", false, "the stack has -c domain (priced with a Route 53 hosted zone; a -template tells it itself)")
	flag.BoolVar(&u.DNSElsewhere, "dns-elsewhere", false, "the domain's DNS is not Route 53 (no hosted zone line)")
	flag.Float64Var(&u.DNSQueries, "dns-queries", 0, "Route 53 queries a month other than alias records to the distribution (free)")
	autoPause := flag.Float64("auto-pause", 0, "SecondsUntilAutoPause to price instead of the stack's (300 to 86400; e.g. 3600, the former restore runbook's)")
	postMS := flag.Float64("post-ms", 20, "milliseconds per @connections post")
	flag.Float64Var(&u.Posting.InFlight, "posts-in-flight", 1, "posts a function has in flight at once (the code: 1)")
	flag.Parse()
	u.Posting.PostSeconds = *postMS / 1000
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "cost: "+format+"\n", a...)
		os.Exit(2)
	}
	switch {
	case u.REQs > u.Messages:
		fail("-reqs cannot exceed -messages")
	case u.MediaGB < 0 || u.MediaUploads < 0 || u.MediaDownloads < 0 || u.MediaMB < 0:
		fail("media figures cannot be negative")
	case u.KeyYear < 1:
		fail("-key-year starts at 1")
	case *postMS < 0 || u.Posting.InFlight < 1:
		fail("-post-ms cannot be negative and -posts-in-flight starts at 1")
	case *autoPause != 0 && (*autoPause < 300 || *autoPause > 86400):
		fail("-auto-pause is from 300 to 86400 seconds (Aurora's range)")
	case u.DNSQueries < 0:
		fail("-dns-queries cannot be negative")
	}
	var s model.Stack
	var err error
	if template != "" {
		var b []byte
		if b, err = os.ReadFile(template); err == nil {
			s, err = model.FromTemplate(b)
		}
		profile = template
	} else {
		s, err = model.Assumed(profile, egress)
	}
	if err != nil {
		fail("%v", err)
	}
	if *domain {
		s.Domains = max(s.Domains, 1)
	}
	if *autoPause != 0 {
		s.Database.AutoPauseSeconds = *autoPause
	}
	var b strings.Builder
	if client != "" {
		pr, err := readProfile(client)
		if err != nil {
			fail("%v", err)
		}
		lines, m, err := model.ClientBill(pr, u.Clients.N, u, s, model.USEast1)
		if err != nil {
			fail("%v", err)
		}
		PrintClients(&b, profile, s, pr, m, lines)
		fmt.Print(b.String())
		return
	}
	lines, life, err := model.Bill(u, s, model.USEast1)
	if err != nil {
		fail("%v", err)
	}
	Print(&b, profile, s, u, life, lines)
	if per, ok := model.PushPerThousand(s, model.USEast1); ok {
		fmt.Fprintf(&b, "pushes: $%.4f per thousand (push sender runs of %.1f s; -pushes N adds them to the bill)\n", per, model.PushSeconds)
	}
	fmt.Print(b.String())
}
