package routes

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/nip40"
	"github.com/buzzrelay/relay/shared/domain/nip70"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/transport/wsrelay"
)

// nipRules are the rules relayinfo.ServedNIPs names, each with a probe
// that the function applies it.
var nipRules = map[string]func() bool{
	"nip40.Check": func() bool { return nip40.Check(nostr.Tags{{"expiration", "1"}}, 2) != nil },
	"nip70.Check": func() bool {
		ev := &nostr.Event{PubKey: "a", Tags: nostr.Tags{{"-"}}}
		return nip70.Check(ev, "b") != nil && nip70.Check(ev, "a") == nil
	},
	"nip29.ParseReply": func() bool {
		r, ok := nip29.ParseReply(nostr.Tags{{"e", "r", "", "root"}, {"e", "p", "", "reply"}})
		return ok && r.Parent == "p" && r.Root == "r"
	},
	"filter.Searches": func() bool {
		return filter.Searches("x") && len(kinds.Where(func(k kinds.Kind) bool { return k.Searchable })) > 0
	},
}

// TestSupportedNIPsAreExactlyWhatIsServed holds NIP-11's supported_nips
// to what the relay serves, both ways, through relayinfo.ServedNIPs: each
// NIP listed has evidence, and each piece exists (a kind row of the kinds
// table, a verb the WebSocket codec serves under that NIP, a route of
// Table, a rule whose probe shows it applied); each kind row, each verb of
// wsrelay.VerbNIPs and each method and path of Table is evidence of a
// listed NIP or in relayinfo.NotListed with why. A kind, verb or route
// added without a NIP decision, or a NIP listed with nothing behind it,
// fails here.
func TestSupportedNIPsAreExactlyWhatIsServed(t *testing.T) {
	served := map[string]bool{} // "METHOD path" of Table
	for _, r := range Table {
		for _, m := range r.Methods {
			served[m+" "+r.Path] = true
		}
	}
	rows := map[int]kinds.Kind{} // a row by its first kind
	for _, k := range kinds.Table() {
		rows[k.First] = k
	}
	listed := relayinfo.New("").SupportedNIPs
	claimedKinds, claimedRoutes, claimedVerbs := map[int]bool{}, map[string]bool{}, map[string]int{}
	var nips []int
	for _, s := range relayinfo.ServedNIPs {
		name := fmt.Sprintf("NIP-%d", s.NIP)
		nips = append(nips, s.NIP)
		if len(s.Kinds)+len(s.Verbs)+len(s.Routes)+len(s.Rules) == 0 {
			t.Errorf("%s is listed with no evidence", name)
		}
		if s.Conditional == slices.Contains(listed, s.NIP) {
			t.Errorf("%s: conditional %v, but supported_nips %v", name, s.Conditional, listed)
		}
		for _, k := range s.Kinds {
			if _, ok := rows[k]; !ok {
				t.Errorf("%s names kind %d, which no row of the kinds table starts with", name, k)
			}
			claimedKinds[k] = true
		}
		for _, v := range s.Verbs {
			if wsrelay.VerbNIPs[v] != s.NIP {
				t.Errorf("%s names verb %s, which the codec serves as NIP-%d", name, v, wsrelay.VerbNIPs[v])
			}
			claimedVerbs[v] = s.NIP
		}
		for _, r := range s.Routes {
			if !served[r] {
				t.Errorf("%s names route %q, which Table does not serve", name, r)
			}
			claimedRoutes[r] = true
		}
		for _, rule := range s.Rules {
			if probe, ok := nipRules[rule]; !ok || !probe() {
				t.Errorf("%s names rule %s, which is not applied (no probe, or its probe fails)", name, rule)
			}
		}
	}
	if !slices.IsSorted(nips) || len(slices.Compact(slices.Clone(nips))) != len(nips) {
		t.Errorf("ServedNIPs %v: keep it in order, one row a NIP", nips)
	}
	unlistedKinds, unlistedRoutes := map[int]string{}, map[string]string{}
	for _, n := range relayinfo.NotListed {
		for _, k := range n.Kinds {
			if claimedKinds[k] {
				t.Errorf("kind %d is both evidence of a listed NIP and not listed (%s)", k, n.Why)
			}
			unlistedKinds[k] = n.Why
		}
		for _, r := range n.Routes {
			if !served[r] {
				t.Errorf("NotListed names route %q, which Table does not serve", r)
			}
			unlistedRoutes[r] = n.Why
		}
	}
	for first, k := range rows {
		if _, ok := unlistedKinds[first]; !ok && !claimedKinds[first] {
			t.Errorf("kind row %d-%d (%s) is served but neither evidence of a listed NIP nor in NotListed", k.First, k.Last, k.Name)
		}
	}
	for r := range served {
		if _, ok := unlistedRoutes[r]; !ok && !claimedRoutes[r] {
			t.Errorf("route %q is served but neither evidence of a listed NIP nor in NotListed", r)
		}
	}
	// A route whose use case names a NIP is evidence of that NIP.
	byNIP := map[int][]string{}
	for _, s := range relayinfo.ServedNIPs {
		byNIP[s.NIP] = s.Routes
	}
	for _, r := range Table {
		var n int
		if i := strings.Index(r.UseCase, "NIP-"); i >= 0 {
			if _, err := fmt.Sscanf(r.UseCase[i:], "NIP-%d", &n); err != nil {
				continue
			}
			for _, m := range r.Methods {
				if !slices.Contains(byNIP[n], m+" "+r.Path) {
					t.Errorf("route %s %s serves %q but is not evidence of NIP-%d", m, r.Path, r.UseCase, n)
				}
			}
		}
	}
	for v, nip := range wsrelay.VerbNIPs {
		if claimedVerbs[v] != nip {
			t.Errorf("verb %s (NIP-%d) is served but not evidence of NIP-%d in ServedNIPs", v, nip, nip)
		}
	}
	// NIP-43 is listed exactly where a community enforces it.
	doc := relayinfo.New("")
	doc.AdvertiseMembership(true)
	if !slices.Contains(doc.SupportedNIPs, relayinfo.NIP43) {
		t.Errorf("an enforcing community's supported_nips %v lacks 43", doc.SupportedNIPs)
	}
}
