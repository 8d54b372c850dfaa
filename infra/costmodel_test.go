package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/localdev/cost/model"
)

// TestCostModelMatchesTemplate synthesizes each profile with each egress
// and reads its template the way `go run ./localdev/cost -template` does:
// the stack the cost model assumes for that profile and egress must be
// the one synthesized (functions and memory, log groups, alarms, NAT,
// public IPv4, endpoints, keys, secrets, Aurora's pause settings), and
// every resource type must have a price or be known free. A failure lists
// each difference; change localdev/cost/model/profiles.go (and the
// prices) with the template.
func TestCostModelMatchesTemplate(t *testing.T) {
	cases := []struct {
		profile, egress string
		synth           func(*testing.T) synthesized
	}{
		{"community", "", defaultStack},
		{"managed", "", managedStack},
		{"community", "nat-instance", nil},
		{"community", "nat-gateway", nil},
		{"managed", "ipv6", nil},
	}
	for _, c := range cases {
		t.Run(c.profile+"/"+c.egress, func(t *testing.T) {
			var s synthesized
			if c.synth != nil {
				s = c.synth(t)
			} else {
				s = synth(t, map[string]any{"profile": c.profile, "egress": c.egress})
			}
			b, err := json.Marshal(s.tpl.ToJSON())
			if err != nil {
				t.Fatal(err)
			}
			got, err := model.FromTemplate(b)
			if err != nil {
				t.Fatal(err)
			}
			want, err := model.Assumed(c.profile, c.egress)
			if err != nil {
				t.Fatal(err)
			}
			if d := model.Diff(got, want); d != nil {
				t.Errorf("the cost model and the template disagree (localdev/cost/model/profiles.go):\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// TestCostModelNamesFunctions: the functions the cost model's designs run
// are functions this app deploys, with the memory the template gives them.
func TestCostModelNamesFunctions(t *testing.T) {
	s, err := model.Assumed("community", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Deployed(Settings{}) {
		m, ok := s.Function(f.Name)
		if !ok || m.MemoryMB != f.Memory || m.Arch != "arm64" {
			t.Errorf("function %s: infra %g MB arm64, cost model %+v (found %v)", f.Name, f.Memory, m, ok)
		}
	}
}
