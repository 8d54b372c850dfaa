package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/localdev/cost/model"
)

func TestPrint(t *testing.T) {
	for _, n := range []int{0, 1} {
		u := model.Usage{Design: "current", DBACU: 0.5, StoredGB: 1, SentKB: 1, KeyYear: 3,
			Clients: model.Clients{N: n, Subscriptions: 2}, Posting: model.Posting{PostSeconds: 0.02, InFlight: 1}}
		s, err := model.Assumed("community", "")
		if err != nil {
			t.Fatal(err)
		}
		lines, life, err := model.Bill(u, s, model.USEast1)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		Print(&b, "community", s, u, life, lines)
		out := strings.Split(strings.TrimSpace(b.String()), "\n")
		if last := out[len(out)-1]; last != fmt.Sprintf("total: $%.2f/month", model.Total(lines)) {
			t.Errorf("last line %q", last)
		}
		if !strings.Contains(out[0], model.PricesDate) || !strings.Contains(out[0], "S3 "+model.S3PricesDate) {
			t.Errorf("first line %q does not date the prices", out[0])
		}
		text := b.String()
		// The assumptions are in the output: the design table, the wake,
		// and with clients their month.
		for _, want := range []string{"design current:", model.ActDisconnect, "SecondsUntilAutoPause"} {
			if !strings.Contains(text, want) {
				t.Errorf("output lacks %q", want)
			}
		}
		if got := strings.Contains(text, "always-open client"); got != (n > 0) {
			t.Errorf("%d connected: clients described %v", n, got)
		}
	}
}
