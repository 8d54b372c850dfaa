package model

import (
	"math"
	"testing"
)

func TestSimulate(t *testing.T) {
	db := relayDatabase // auto-pause 300 s; the server closes a frozen environment's connection after 60 s
	window := float64(ResumeSeconds) + 60 + 300
	for _, c := range []struct {
		name     string
		design   string
		clients  Clients
		session  float64 // minutes
		sessions float64
		counts   map[string]float64
		bursts   int
		resumes  int
		awakeH   float64 // hours; NaN: at least 729.9
	}{
		{name: "nobody", design: "current", clients: Clients{Subscriptions: 2}, session: 10},
		// No heartbeat: API Gateway drops the socket after 10 idle
		// minutes; each reconnect (and the $disconnect before it) is one
		// burst, 600 s apart, longer than a wake: every one resumes.
		{name: "1 silent client", design: "current", clients: Clients{N: 1, Subscriptions: 2}, session: 10, sessions: 4380,
			counts: map[string]float64{ActConnect: 4380, ActEarlyREQ: 8760, ActAuth: 4380, ActResumeREQ: 8760, ActDisconnect: 4380, ActHeartbeat: 0},
			bursts: 4380, resumes: 4380, awakeH: 4380 * window / 3600},
		// A heartbeat at or past the idle timeout comes too late.
		{name: "heartbeat after 12 min", design: "current", clients: Clients{N: 1, Subscriptions: 1, HeartbeatMinutes: 12}, session: 10, sessions: 4380,
			counts: map[string]float64{ActHeartbeat: 0}, bursts: 4380, resumes: 4380, awakeH: 4380 * window / 3600},
		// NDK's 2-minute probe keeps the socket for the full 2 hours
		// (59 probes) but each probe is a REQ: Aurora never pauses.
		{name: "NDK heartbeat", design: "current", clients: Clients{N: 1, Subscriptions: 2, HeartbeatMinutes: 2}, session: 120, sessions: 365,
			counts: map[string]float64{ActHeartbeat: 365 * 59, ActConnect: 365}, bursts: 365 * 60, resumes: 1, awakeH: math.NaN()},
		// Ten silent clients spread over 10 minutes: a burst a minute.
		{name: "10 silent clients", design: "current", clients: Clients{N: 10, Subscriptions: 2}, session: 10, sessions: 43800,
			bursts: 43800, resumes: 1, awakeH: math.NaN()},
		// With the sessions' state in S3, silent clients' reconnects run
		// no statement: no burst at all.
		{name: "10 clients, lastcommit", design: "lastcommit", clients: Clients{N: 10, Subscriptions: 2}, session: 10, sessions: 43800,
			counts: map[string]float64{ActResumeREQ: 87600, ActHeartbeat: 0}},
		// NDK's probe has no since, so it still takes the database path:
		// Aurora never pauses.
		{name: "NDK heartbeat, lastcommit", design: "lastcommit", clients: Clients{N: 1, Subscriptions: 2, HeartbeatMinutes: 2}, session: 120, sessions: 365,
			counts: map[string]float64{ActHeartbeat: 365 * 59}, bursts: 365 * 59, resumes: 1, awakeH: math.NaN()},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Simulate(c.clients, Designs[c.design], db)
			if err != nil {
				t.Fatal(err)
			}
			if l.SessionMinutes != c.session || l.Sessions != c.sessions {
				t.Errorf("sockets of %g min, %g a month; want %g min, %g", l.SessionMinutes, l.Sessions, c.session, c.sessions)
			}
			for a, want := range c.counts {
				if l.Count[a] != want {
					t.Errorf("%s x%g, want %g", a, l.Count[a], want)
				}
			}
			if l.Bursts != c.bursts || l.Resumes != c.resumes {
				t.Errorf("%d bursts, %d resumes; want %d, %d", l.Bursts, l.Resumes, c.bursts, c.resumes)
			}
			h := l.AwakeSeconds / 3600
			if math.IsNaN(c.awakeH) {
				if h < 729.9 {
					t.Errorf("awake %.2f h, want the whole month", h)
				}
			} else if math.Abs(h-c.awakeH) > 1e-6 {
				t.Errorf("awake %.4f h, want %.4f", h, c.awakeH)
			}
		})
	}
	if _, err := Simulate(Clients{N: -1}, Designs["current"], db); err == nil {
		t.Error("negative clients accepted")
	}
}

// TestDesignsComplete: every design prices every action with a function
// the profiles deploy.
func TestDesignsComplete(t *testing.T) {
	for _, p := range Profiles() {
		s, err := Assumed(p, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range DesignNames() {
			if err := Designs[n].Check(s); err != nil {
				t.Error(err)
			}
		}
	}
}

func TestPostingSeconds(t *testing.T) {
	a := Action{Seconds: 0.015, Posts: 1}
	for _, c := range []struct {
		p     Posting
		extra float64
		want  float64
	}{
		{Posting{0.020, 1}, 0, 0.035},
		{Posting{0.020, 1}, 9, 0.215}, // 10 posts one after another
		{Posting{0.020, 4}, 9, 0.075}, // ceil(10/4) = 3 rounds
		{Posting{0.020, 0}, 1, 0.055}, // in flight below 1 counts as 1
	} {
		if got := c.p.Seconds(a, c.extra); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v extra %g: %g s, want %g", c.p, c.extra, got, c.want)
		}
	}
	if got := (Posting{0.020, 1}).Seconds(Action{Seconds: 0.005}, 0); got != 0.005 {
		t.Errorf("no posts: %g s", got)
	}
}
