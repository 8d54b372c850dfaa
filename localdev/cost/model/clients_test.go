package model

import (
	"strings"
	"testing"
)

// A recorded profile prices what it recorded: a session whose idle
// minutes run no statement wakes Aurora only at its sockets' starts (every
// 2 hours: API Gateway's limit), one with a statement every 2 minutes
// keeps it awake all month; S3, DynamoDB and KMS requests are priced at
// their tiers; a reconnect seen while idle shortens a socket's life.
func TestClientBillPricesTheRecordedSession(t *testing.T) {
	s, err := Assumed("community", "")
	if err != nil {
		t.Fatal(err)
	}
	quiet := Profile{Client: "quiet", IdleSeconds: 600, LivenessSeconds: 30,
		Start:   Phase{Connects: 1, MessagesIn: 5, FramesOut: 8, Statements: 6, AWS: map[string]float64{"S3 GetObject": 2, "S3 PutObject": 1}},
		Idle:    Phase{FramesOut: 20},
		End:     Phase{AWS: map[string]float64{"DynamoDB DeleteItem": 1}},
		TickAWS: map[string]float64{"S3 ListObjectsV2": 1}}
	busy := quiet
	busy.Client, busy.IdleBursts = "busy", []float64{120, 240, 360, 480, 600}
	reconnecting := quiet
	reconnecting.Client, reconnecting.Idle = "reconnecting", Phase{Connects: 1, FramesOut: 20}
	u := Usage{DBACU: 0.5, StoredGB: 1, SentKB: 1, KeyYear: 1, Posting: Posting{PostSeconds: 0.02, InFlight: 1}}
	for _, tc := range []struct {
		p              Profile
		n              int
		sessionMinutes float64
		awakeAllMonth  bool
	}{
		{quiet, 1, MaxConnectionMinutes, false},
		{quiet, 10, MaxConnectionMinutes, false},
		{busy, 1, MaxConnectionMinutes, true},
		{reconnecting, 1, 10, false},
	} {
		lines, m, err := ClientBill(tc.p, tc.n, u, s, USEast1)
		if err != nil {
			t.Fatal(err)
		}
		if m.SessionMinutes != tc.sessionMinutes {
			t.Errorf("%s: a socket lives %g min, want %g", tc.p.Client, m.SessionMinutes, tc.sessionMinutes)
		}
		wantSessions := float64(tc.n) * HoursPerMonth * 60 / tc.sessionMinutes
		if m.Sessions != wantSessions || m.MessagesIn != wantSessions*5 {
			t.Errorf("%s: %g sockets and %g messages, want %g and %g", tc.p.Client, m.Sessions, m.MessagesIn, wantSessions, wantSessions*5)
		}
		if all := m.AwakeSeconds >= 0.99*monthSeconds; all != tc.awakeAllMonth {
			t.Errorf("%s x%d: awake %.0f h of %d", tc.p.Client, tc.n, m.AwakeSeconds/3600, HoursPerMonth)
		}
		text := ""
		for _, l := range lines {
			text += l.Item + "\n"
		}
		for _, want := range []string{"S3", "DynamoDB", "liveness ticks while clients are open", "Aurora compute, "} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q line in\n%s", tc.p.Client, want, text)
			}
		}
		if strings.Contains(text, "liveness ticks: S3") {
			t.Errorf("%s: the modelled ticks' S3 line is priced besides the recorded one", tc.p.Client)
		}
	}
	if _, _, err := ClientBill(Profile{Client: "x", IdleSeconds: 1, Idle: Phase{AWS: map[string]float64{"SES SendEmail": 1}}}, 1, u, s, USEast1); err == nil {
		t.Error("a request of a service without a price was priced")
	}
}
