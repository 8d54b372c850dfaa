package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// API Gateway's WebSocket quotas (API Gateway developer guide, "Quotas for
// configuring and running a WebSocket API"): a connection without a frame
// for 10 minutes is closed, and every connection after 2 hours.
const (
	IdleMinutes          = 10
	MaxConnectionMinutes = 120
)

// ResumeSeconds is how long a paused Aurora Serverless v2 instance takes
// to resume ("up to 15 seconds", AWS Database Blog, "Introducing scaling
// to 0 capacity with Amazon Aurora Serverless v2"); it is billed awake.
const ResumeSeconds = 15

// Clients are N always-open clients of one community with no other
// traffic: each holds Subscriptions REQs and reconnects at once whenever
// API Gateway closes its socket.
type Clients struct {
	N             int
	Subscriptions int
	// HeartbeatMinutes is how often a client sends something while the
	// relay is silent; 0 sends nothing, so API Gateway drops the socket
	// after IdleMinutes. NDK probes after 2 minutes of silence
	// (core/src/relay/connectivity.ts: NDKRelayKeepalive(120000), a REQ
	// {kinds:[99999],limit:0} and its CLOSE).
	HeartbeatMinutes float64
	// NIP11PollMinutes is how often NIP-11 is fetched (a monitor, or a
	// client reading the relay's document), whatever N; 0: never.
	NIP11PollMinutes float64
}

// Lifecycle is one month of Clients in a design.
type Lifecycle struct {
	SessionMinutes float64            // how long a socket lives
	Sessions       float64            // sockets opened in the month, all clients
	Count          map[string]float64 // times each action runs in the month
	// PerSession is each action's count in one socket's life.
	PerSession map[string]float64
	// Bursts are moments a database statement runs (a reconnect's
	// messages with the $disconnect before them, a heartbeat); Resumes
	// the bursts that found Aurora paused; AwakeSeconds the time it was
	// awake because of them.
	Bursts, Resumes int
	AwakeSeconds    float64
}

// Month is HoursPerMonth in seconds.
const monthSeconds = HoursPerMonth * 3600

// Simulate runs a month of c in design d against database db. The
// clients' sockets are spread evenly over a socket's life (client i opens
// at i/N of it), which is the most awake time N clients can cause: wakes
// that coincide share one awake window.
func Simulate(c Clients, d Design, db Database) (Lifecycle, error) {
	if c.N < 0 || c.Subscriptions < 0 || c.HeartbeatMinutes < 0 || c.NIP11PollMinutes < 0 {
		return Lifecycle{}, fmt.Errorf("clients, subscriptions, heartbeat and NIP-11 minutes cannot be negative")
	}
	l := Lifecycle{Count: map[string]float64{}, PerSession: map[string]float64{}, SessionMinutes: IdleMinutes}
	beats := 0.0
	if c.HeartbeatMinutes > 0 && c.HeartbeatMinutes < IdleMinutes {
		l.SessionMinutes = MaxConnectionMinutes
		beats = math.Ceil(l.SessionMinutes/c.HeartbeatMinutes) - 1
	}
	subs := float64(c.Subscriptions)
	l.PerSession = map[string]float64{
		ActConnect: 1, ActGreet: 1, ActEarlyREQ: subs, ActAuth: 1, ActResumeREQ: subs, ActHeartbeat: beats, ActDisconnect: 1,
	}
	var at []float64
	if c.NIP11PollMinutes > 0 {
		polls := math.Floor(HoursPerMonth * 60 / c.NIP11PollMinutes)
		l.Count[ActNIP11] = polls
		if d.Actions[ActNIP11].DBTrips > 0 {
			for k := 0.0; k < polls; k++ {
				at = append(at, k*c.NIP11PollMinutes*60)
			}
		}
	}
	perClient := 0.0
	if c.N > 0 {
		perClient = math.Floor(HoursPerMonth * 60 / l.SessionMinutes)
	}
	l.Sessions = perClient * float64(c.N)
	for a, n := range l.PerSession {
		l.Count[a] = n * l.Sessions
	}

	touches := func(names ...string) bool {
		for _, n := range names {
			if d.Actions[n].DBTrips > 0 && l.PerSession[n] > 0 {
				return true
			}
		}
		return false
	}
	reconnectWakes := touches(ActConnect, ActEarlyREQ, ActAuth, ActResumeREQ, ActDisconnect)
	beatWakes := touches(ActHeartbeat)
	session := l.SessionMinutes * 60
	for i := 0; i < c.N; i++ {
		offset := session * float64(i) / float64(c.N)
		for k := 0.0; k < perClient; k++ {
			start := offset + k*session
			if reconnectWakes {
				at = append(at, start)
			}
			if beatWakes {
				for j := 1.0; j <= beats; j++ {
					at = append(at, start+j*c.HeartbeatMinutes*60)
				}
			}
		}
	}
	l.Bursts = len(at)
	if db.MinACU > 0 {
		return l, nil // it never pauses: Bill charges the whole month
	}
	l.Resumes, l.AwakeSeconds = Awake(at, db)
	return l, nil
}

// Awake is what bursts of statements at the times at (seconds into the
// month) cost a database that pauses: each burst that finds it paused
// resumes it (ResumeSeconds), and it stays awake until the last
// connection closes (Database.TailSeconds after the last burst) and then
// until it pauses (AutoPauseSeconds); bursts within that window share it.
func Awake(at []float64, db Database) (resumes int, awakeSeconds float64) {
	at = slices.Clone(at)
	sort.Float64s(at)
	window := db.TailSeconds() + db.AutoPauseSeconds
	awakeUntil := math.Inf(-1)
	for _, t := range at {
		if t >= awakeUntil {
			resumes++
			awakeSeconds += ResumeSeconds + window
			awakeUntil = t + ResumeSeconds + window
			continue
		}
		if end := t + window; end > awakeUntil {
			awakeSeconds += end - awakeUntil
			awakeUntil = end
		}
	}
	return resumes, min(awakeSeconds, monthSeconds)
}
