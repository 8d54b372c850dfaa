package model

import (
	"math"
	"strings"
	"testing"
)

// A wake lasts from the resume until the last connection closes (the
// server's idle_session_timeout after the last statement: Lambda freezes
// the environment, so the pool's own check never runs) and then the
// auto-pause; without a server timeout the database never pauses. The
// template's parameter group and scaling configuration give both.
func TestWakeLength(t *testing.T) {
	for _, c := range []struct {
		name        string
		db          Database
		wake, month float64 // seconds of one burst; hours awake for one burst a day (31 in 730 h)
	}{
		{"stack as deployed", relayDatabase, 15 + 60 + 300, 31.0 * 375 / 3600},
		{"the former runbook's auto-pause", Database{Instances: 1, AutoPauseSeconds: 3600, PoolIdleSeconds: 30, ServerIdleSeconds: 60}, 15 + 60 + 3600, 31.0 * 3675 / 3600},
		{"a day's auto-pause", Database{Instances: 1, AutoPauseSeconds: 86400, PoolIdleSeconds: 30, ServerIdleSeconds: 60}, 15 + 60 + 86400, 730},
		{"no server timeout", Database{Instances: 1, AutoPauseSeconds: 300, PoolIdleSeconds: 30}, math.Inf(1), 730},
	} {
		t.Run(c.name, func(t *testing.T) {
			if w := c.db.WakeSeconds(); w != c.wake {
				t.Errorf("wake %g s, want %g", w, c.wake)
			}
			var at []float64
			for d := 0.0; d < monthSeconds; d += 86400 {
				at = append(at, d)
			}
			_, awake := Awake(at, c.db)
			if h := awake / 3600; math.Abs(h-c.month) > 0.01 {
				t.Errorf("one burst a day: awake %.2f h, want %.2f", h, c.month)
			}
		})
	}

	tpl := `{"Resources":{
  "P":{"Type":"AWS::RDS::DBClusterParameterGroup","Properties":{"Parameters":{"idle_session_timeout":"45000"}}},
  "D":{"Type":"AWS::CloudFront::Distribution","Properties":{"DistributionConfig":{"Aliases":["relay.example.com"]}}},
  "E":{"Type":"AWS::CloudFront::Distribution","Properties":{"DistributionConfig":{}}}}}`
	s, err := FromTemplate([]byte(tpl))
	if err != nil {
		t.Fatal(err)
	}
	if s.Database.ServerIdleSeconds != 45 || s.Distributions != 2 || s.Domains != 1 {
		t.Errorf("server idle %g s, %d distributions, %d on a domain", s.Database.ServerIdleSeconds, s.Distributions, s.Domains)
	}
}

// With -c domain the zone is a Route 53 hosted zone ($0.50) unless the
// operator's DNS is elsewhere; alias queries to the distribution are free,
// other queries $0.40 a million; without a domain, no line.
func TestRoute53WithADomain(t *testing.T) {
	s, err := Assumed("community", "")
	if err != nil {
		t.Fatal(err)
	}
	route53 := func(s Stack, u Usage) (float64, int) {
		lines, _, err := Bill(u, s, USEast1)
		if err != nil {
			t.Fatal(err)
		}
		sum, n := 0.0, 0
		for _, l := range lines {
			if strings.HasPrefix(l.Item, "Route 53") {
				sum += l.USD
				n++
			}
		}
		return sum, n
	}
	withDomain := s
	withDomain.Domains = 1
	for _, c := range []struct {
		name  string
		s     Stack
		u     func(*Usage)
		usd   float64
		lines int
	}{
		{"no domain", s, func(*Usage) {}, 0, 0},
		{"domain, zone in Route 53", withDomain, func(*Usage) {}, 0.50, 1},
		{"domain, 2M other queries", withDomain, func(u *Usage) { u.DNSQueries = 2e6 }, 0.50 + 0.80, 2},
		{"domain, DNS elsewhere", withDomain, func(u *Usage) { u.DNSElsewhere = true }, 0, 0},
	} {
		u := idle
		c.u(&u)
		if usd, n := route53(c.s, u); math.Abs(usd-c.usd) > 1e-9 || n != c.lines {
			t.Errorf("%s: $%.2f in %d lines, want $%.2f in %d", c.name, usd, n, c.usd, c.lines)
		}
	}
}
