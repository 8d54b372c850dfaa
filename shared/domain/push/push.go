// Package push is the pure rules of push notifications: what a NIP-9a
// subscription (kind 30390) may say, where its callback may point, what a
// NIP-PL lease's public tags and filters may say (nippl.go), the limits and
// the retry schedule. No I/O: shared/service/push applies them.
package push

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/netpolicy"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
)

// Limits of NIP-9a subscriptions and of every delivery.
const (
	// MaxSubscriptionsPerKey is the live 30390 addresses one key may hold in
	// a community (zooid keeps about ten).
	MaxSubscriptionsPerKey = 10
	// MaxFilters is the filter tags of one subscription, MaxIgnores its
	// ignore tags; MaxFilterBytes bounds each tag's JSON.
	MaxFilters     = 4
	MaxIgnores     = 8
	MaxFilterBytes = 2048
	// MaxCallbackLength bounds the callback URL.
	MaxCallbackLength = 512
	// MaxPayloadBytes caps a callback's body: an include_event delivery
	// whose event would make it larger goes without the event (the id
	// still tells the receiver what to fetch).
	MaxPayloadBytes = 64 << 10
	// MaxAttempts is the tries of one delivery before it is dead;
	// DropAfterFailures the dead deliveries in a row after which the
	// subscription is dropped (a 404 or 410 drops it at once).
	MaxAttempts       = 5
	DropAfterFailures = 10
	// CallbacksPerHostPerMinute is the tries one callback host gets per
	// minute across the deployment, whatever the URL's path, query or
	// port (RateHost); WakesPerEndpointPerMinute the wakes one lease
	// endpoint gets; DeliveriesPerCommunityPerMinute the tries of all one
	// community's subscriptions and leases together. A try over a cap
	// waits for the next minute (not counted as an attempt). The
	// community's cap is sized for 100 subscribers of a channel with a
	// message a second; the host's is the per-URL cap it replaces.
	CallbacksPerHostPerMinute       = 120
	WakesPerEndpointPerMinute       = 120
	DeliveriesPerCommunityPerMinute = 6000
	// RequestTimeout bounds one callback or wake request: every delivery's
	// own deadline, far shorter than a run of the sender (no try starts
	// within RequestTimeout of the run's end).
	RequestTimeout = 5 * time.Second
	// SendConcurrency is the tries one run of the sender has in flight at
	// once, on different hosts; SendsPerHost the tries one host has in
	// flight, so that slow hosts never hold the others' deliveries. One:
	// a host's deliveries go one after another, so a crash of the sender
	// sends again at most the one request per host it cut (a receiver sees
	// at most one repeat, never a burst); a host answering within 0.5 s
	// still gets its CallbacksPerHostPerMinute (one try per 0.5 s), and a
	// slower one gets fewer, its own load shed, as a crawler keeps one
	// connection per host. SendsToGateway is the wakes in flight to the
	// NIP-PL gateway, the deployment's own service, built for the relay's
	// load: a lease per member makes one event many wakes, and a wake a
	// crash repeats carries no content.
	SendConcurrency = 64
	SendsPerHost    = 1
	SendsToGateway  = 8
)

// Rate is one per-minute cap a try counts against.
type Rate struct {
	Scope     string
	PerMinute int
}

// CallbackRates are the caps of one NIP-9a callback try to callback in
// community: its host (RateHost) and the community.
func CallbackRates(community, callback string) []Rate {
	return []Rate{
		{Scope: "host/" + RateHost(callback), PerMinute: CallbacksPerHostPerMinute},
		{Scope: "community/" + community, PerMinute: DeliveriesPerCommunityPerMinute},
	}
}

// WakeRates are the caps of one NIP-PL wake of endpoint grant in
// community (every wake goes to the deployment's one gateway: its
// endpoints, not its host, are what a key multiplies).
func WakeRates(community, grant string) []Rate {
	return []Rate{
		{Scope: "endpoint/" + community + "/" + grant, PerMinute: WakesPerEndpointPerMinute},
		{Scope: "community/" + community, PerMinute: DeliveriesPerCommunityPerMinute},
	}
}

// RateHost is the host a callback URL counts against: its hostname in
// lower case without port or trailing dot, an IPv6 literal by its /64
// (one subscriber holds a whole /64). A name's subdomains are hosts of
// their own (the community's cap bounds what many names can take); ""
// for a URL without a host.
func RateHost(callback string) string {
	u, err := url.Parse(callback)
	if err != nil {
		return ""
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip, err := netip.ParseAddr(h); err == nil && ip.Is6() && !ip.Is4In6() {
		p, _ := ip.WithZone("").Prefix(64)
		return p.String()
	}
	return h
}

// Subscription is a valid NIP-9a subscription.
type Subscription struct {
	D            string
	Relay        string
	Callback     string
	Filters      []nostr.Filter
	Ignore       []nostr.Filter
	IncludeEvent bool
	// ExpiresAt is its NIP-40 expiration (0: none).
	ExpiresAt int64
}

// Policy is where callbacks may point.
type Policy struct {
	// AllowPrivate lets callbacks use http and private, loopback or
	// link-local addresses: the local exception for tests and make dev
	// (PUSH_ALLOW_PRIVATE_CALLBACKS). Never set in a deployment.
	AllowPrivate bool
}

// ParseSubscription validates a kind 30390 event (its signature and shape
// already checked) as a subscription to this relay (hosts, the community's
// hostnames; none: any): one d, a relay tag naming this relay, 1..MaxFilters filter
// tags of JSON filters, at most MaxIgnores ignore tags, exactly one
// callback, an optional include_event.
func ParseSubscription(ev *nostr.Event, hosts []string, p Policy) (*Subscription, error) {
	s := &Subscription{}
	seen := map[string]int{}
	for _, t := range ev.Tags {
		if len(t) == 0 {
			continue
		}
		seen[t[0]]++
		val := ""
		if len(t) > 1 {
			val = t[1]
		}
		switch t[0] {
		case "d":
			s.D = val
		case "relay":
			s.Relay = val
		case "callback":
			s.Callback = val
		case "include_event":
			s.IncludeEvent = val == "" || val == "true"
		case "expiration":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n <= 0 {
				return nil, reject.Invalidf("push subscription: expiration %q is not a unix time", val)
			}
			s.ExpiresAt = n
		case "filter", "ignore":
			f, none, err := parseFilter(t[0], val)
			if err != nil {
				return nil, err
			}
			if none {
				continue // it matches nothing: as if absent
			}
			if t[0] == "filter" {
				s.Filters = append(s.Filters, f)
			} else {
				s.Ignore = append(s.Ignore, f)
			}
		}
	}
	switch {
	case seen["d"] != 1 || s.D == "":
		return nil, reject.Invalidf("push subscription: exactly one non-empty d tag is required")
	case seen["relay"] != 1:
		return nil, reject.Invalidf("push subscription: exactly one relay tag is required")
	case !sameRelay(s.Relay, hosts):
		return nil, reject.Invalidf("push subscription: relay tag %q does not name this relay", s.Relay)
	case len(s.Filters) == 0:
		return nil, reject.Invalidf("push subscription: at least one filter tag is required")
	case len(s.Filters) > MaxFilters:
		return nil, reject.Invalidf("push subscription: at most %d filter tags", MaxFilters)
	case len(s.Ignore) > MaxIgnores:
		return nil, reject.Invalidf("push subscription: at most %d ignore tags", MaxIgnores)
	case seen["callback"] != 1:
		return nil, reject.Invalidf("push subscription: exactly one callback tag is required")
	}
	if err := CheckCallback(s.Callback, p); err != nil {
		return nil, err
	}
	return s, nil
}

// parseFilter reads one filter or ignore tag: a JSON NIP-01 filter with no
// search (a live match cannot honour one) and no ids (only future events
// are pushed).
//
// A tag condition's values nested one level deep are read flattened:
// Flotilla sends its muted rooms as {"#h": [mutedRooms]}. A condition left
// with no value matches nothing, and so does its filter: none reports it
// (an ignore tag that ignores nothing; never one that ignores everything).
func parseFilter(name, val string) (f nostr.Filter, none bool, err error) {
	if len(val) > MaxFilterBytes {
		return f, false, reject.Invalidf("push subscription: a %s tag is over %d bytes", name, MaxFilterBytes)
	}
	if err := json.Unmarshal([]byte(val), &f); err != nil {
		flat, ok := flattenTagValues(val)
		if !ok || json.Unmarshal(flat, &f) != nil {
			return f, false, reject.Invalidf("push subscription: %s tag is not a JSON filter", name)
		}
	}
	if filter.Searches(f.Search) {
		return f, false, reject.Invalidf("push subscription: %s tag: search is not supported", name)
	}
	if len(f.IDs) > 0 {
		return f, false, reject.Invalidf("push subscription: %s tag: ids cannot match a future event", name)
	}
	for _, v := range f.Tags {
		if len(v) == 0 {
			return f, true, nil
		}
	}
	return f, false, nil
}

// flattenTagValues rewrites a JSON filter whose "#x" conditions hold
// arrays of strings (one level deep) as their strings; ok is false for
// anything else.
func flattenTagValues(val string) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(val), &m) != nil {
		return nil, false
	}
	for k, raw := range m {
		if !strings.HasPrefix(k, "#") {
			continue
		}
		var flat []string
		if json.Unmarshal(raw, &flat) == nil {
			continue
		}
		var nested [][]string
		if json.Unmarshal(raw, &nested) != nil {
			return nil, false
		}
		flat = []string{}
		for _, n := range nested {
			flat = append(flat, n...)
		}
		m[k], _ = json.Marshal(flat)
	}
	b, err := json.Marshal(m)
	return b, err == nil
}

// sameRelay reports whether the relay tag names the relay at one of hosts:
// a ws or wss URL of that hostname (any path, any trailing slash).
func sameRelay(tag string, hosts []string) bool {
	u, err := url.Parse(strings.TrimSpace(tag))
	if err != nil || (u.Scheme != "wss" && u.Scheme != "ws") || u.Host == "" {
		return false
	}
	if len(hosts) == 0 {
		return true
	}
	for _, h := range hosts {
		if strings.EqualFold(u.Hostname(), relayurl.Hostname(h)) {
			return true
		}
	}
	return false
}

// CheckCallback is the callback URL policy at ingest: https (http too
// under AllowPrivate), a host, no user info, at most MaxCallbackLength
// bytes, and a host netpolicy.CheckHost accepts (no IP literal that is not
// a public address, no local name). A name is checked again after DNS
// resolution, at every connection (netpolicy.PublicAddr, applied by the
// sender's dialer).
func CheckCallback(raw string, p Policy) error {
	if len(raw) > MaxCallbackLength {
		return reject.Invalidf("push callback: longer than %d bytes", MaxCallbackLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return reject.Invalidf("push callback: not an absolute URL without user info")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowPrivate:
	default:
		return reject.Invalidf("push callback: the URL must be https")
	}
	if p.AllowPrivate {
		return nil
	}
	if err := netpolicy.CheckHost(u.Hostname()); err != nil {
		return reject.Invalidf("push callback: %s is not a public host", strings.ToLower(u.Hostname()))
	}
	return nil
}

// Backoff is the wait before try attempt+1 of a delivery that failed
// attempt times: 1 s, 4 s, 16 s, 64 s, capped at 5 minutes.
func Backoff(attempt int) time.Duration {
	if attempt < 1 {
		return 0
	}
	d := time.Second
	for i := 1; i < attempt && d < 5*time.Minute; i++ {
		d *= 4
	}
	return min(d, 5*time.Minute)
}

// Callback is the body NIP-9a POSTs: the event id, the relay, and with
// include_event the event itself.
type Callback struct {
	ID    string          `json:"id"`
	Relay string          `json:"relay"`
	Event json.RawMessage `json:"event,omitempty"`
}

// CallbackBody encodes the body for event id (raw, its stored JSON) at
// relay, with the event when include asks for it and it fits
// MaxPayloadBytes.
func CallbackBody(id, relay, raw string, include bool) ([]byte, error) {
	c := Callback{ID: id, Relay: relay}
	if include && len(raw)+len(id)+len(relay)+64 <= MaxPayloadBytes {
		c.Event = json.RawMessage(raw)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("push: encode callback: %w", err)
	}
	return b, nil
}

// Match returns the first of filters that ev, stored in channel, matches,
// when it matches none of ignore (filter.Filter's rule: #h is the stored
// channel, so reactions and edits match their target's channel).
func Match(filters, ignore []nostr.Filter, ev *nostr.Event, channel string) (filter.Filter, bool) {
	for _, nf := range ignore {
		f := filter.FromNostr(nf)
		if f.Matches(ev, channel) {
			return filter.Filter{}, false
		}
	}
	for _, nf := range filters {
		f := filter.FromNostr(nf)
		if f.Matches(ev, channel) {
			return f, true
		}
	}
	return filter.Filter{}, false
}
