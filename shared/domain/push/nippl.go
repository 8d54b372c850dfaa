package push

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/groupid"
	"github.com/buzzrelay/relay/shared/domain/reject"
)

// NIP-PL (block/buzz docs/nips/NIP-PL.md): the limits this executor
// advertises in its NIP-11 push descriptor and enforces at acceptance.
const (
	MaxLeaseTTL            = 30 * 24 * 3600 // max_lease_ttl
	LeaseSkew              = 15 * 60        // allowed_skew
	MaxLeasesPerKey        = 16             // max_leases_per_pubkey
	MaxLeaseSubscriptions  = 16             // max_subscriptions_per_lease
	MaxLeaseKinds          = 16             // max_kinds
	MaxLeaseAuthors        = 20             // max_authors
	MaxLeaseH              = 50             // max_h
	MaxLeaseTagValues      = 20             // max_tag_values
	MaxLeaseIgnore         = 8              // max_ignore
	MaxLeaseContent        = 65536          // max_content_len
	MaxLeasePlaintext      = 32768          // max_plaintext_len
	MaxLeaseEndpoint       = 4096           // max_endpoint_len
	MaxLeaseString         = 512            // max_string_len
	MaxLeaseD              = 64             // d, bytes
	ExtensionNIPPL         = "nip-pl"       // supported_extensions
	LeaseHGrammar          = "nip29-group-id"
	ExecutorKeyID          = "1" // the one executor key of a community
	leaseVersion           = 1
	wakeLifetime           = 300 // a wake's expires_at, seconds ahead
	WakeWireVersion        = 1
	MaxWakeRequestBytes    = 8 << 10
	LeaseClassSilent       = "silent"
	LeaseClassDefault      = "default"
	LeaseClassTimeSensitve = "time_sensitive"
	LeaseClassUrgent       = "urgent"
)

// PushKinds are the kinds a lease filter may ask for: messages, replies,
// reactions, gift wraps and Buzz's stream messages and forum posts; no
// ephemeral, presence, typing or relay-signed kind.
var PushKinds = []int{7, 9, 10, 11, 1059, 40002, 45001, 45003}

// Classes is the class registry in order; LeaseClasses those this
// executor supports for every transport (urgent needs approval kinds it
// does not advertise).
var (
	Classes      = []string{LeaseClassSilent, LeaseClassDefault, LeaseClassTimeSensitve, LeaseClassUrgent}
	LeaseClasses = []string{LeaseClassSilent, LeaseClassDefault, LeaseClassTimeSensitve}
)

// AppProfile is one app profile the executor's gateway serves.
type AppProfile struct {
	ID        string `json:"id"`
	Transport string `json:"transport"`
}

// LeaseTags checks a 30350's public tags: exactly one d (at most MaxLeaseD
// bytes), one expiration, one exec and at most one alt, each with exactly
// one value, and nothing else; the expiration within (now - LeaseSkew,
// now + MaxLeaseTTL]. It returns d, the expiration and exec.
func LeaseTags(ev *nostr.Event, now int64) (d string, exp int64, exec string, err error) {
	count := map[string]int{}
	for _, t := range ev.Tags {
		if len(t) != 2 {
			return "", 0, "", reject.Invalidf("lease tags must each have exactly one value")
		}
		count[t[0]]++
		switch t[0] {
		case "d":
			d = t[1]
		case "expiration":
			exp, err = strconv.ParseInt(t[1], 10, 64)
			if err != nil {
				return "", 0, "", reject.Invalidf("lease expiration is not a unix time")
			}
		case "exec":
			exec = t[1]
		case "alt":
		default:
			return "", 0, "", reject.Invalidf("lease public tags are only d, expiration, exec and alt: %q is not allowed", groupid.Clip(t[0]))
		}
	}
	switch {
	case count["d"] != 1 || d == "" || len(d) > MaxLeaseD:
		return "", 0, "", reject.Invalidf("lease needs exactly one d of 1 to %d bytes", MaxLeaseD)
	case count["expiration"] != 1:
		return "", 0, "", reject.Invalidf("lease needs exactly one expiration")
	case count["exec"] != 1:
		return "", 0, "", reject.Invalidf("lease needs exactly one exec")
	case count["alt"] > 1:
		return "", 0, "", reject.Invalidf("lease has more than one alt")
	case exp <= now-LeaseSkew:
		return "", 0, "", reject.Invalidf("lease already expired")
	case exp > now+MaxLeaseTTL:
		return "", 0, "", reject.Invalidf("lease ttl too long")
	}
	return d, exp, exec, nil
}

// Lease is a lease's decrypted content (schema v=1).
type Lease struct {
	V             int64               `json:"v"`
	Origin        string              `json:"origin"`
	AppProfile    string              `json:"app_profile"`
	Transport     string              `json:"transport"`
	Endpoint      string              `json:"endpoint"`
	Generation    int64               `json:"generation"`
	Active        bool                `json:"active"`
	Subscriptions []LeaseSubscription `json:"subscriptions"`
}

// LeaseSubscription is one {filter, class, ignore?, suppress?}.
type LeaseSubscription struct {
	Filter   json.RawMessage   `json:"filter"`
	Class    string            `json:"class"`
	Ignore   []json.RawMessage `json:"ignore,omitempty"`
	Suppress *struct {
		PTagsMax int `json:"p_tags_max"`
	} `json:"suppress,omitempty"`
}

// Executor is what a lease is checked against: the community's canonical
// origin and the app profiles of its gateway.
type Executor struct {
	Origin   string
	Profiles []AppProfile
}

// ParseLease checks a decrypted lease plaintext for author: size, strict
// JSON (no duplicate keys, no unknown members), the v=1 schema (active or
// the minimal inactive one), the origin byte for byte, the app profile and
// transport, each subscription's filter grammar and class. It returns the
// lease and its subscriptions' filters and ignore filters as NIP-01
// filters, ready to match.
func ParseLease(plain []byte, author string, x Executor) (*Lease, []nostr.Filter, []nostr.Filter, error) {
	if len(plain) > MaxLeasePlaintext {
		return nil, nil, nil, reject.Invalidf("lease plaintext is over %d bytes", MaxLeasePlaintext)
	}
	if err := noDuplicateKeys(plain); err != nil {
		return nil, nil, nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(plain, &members); err != nil {
		return nil, nil, nil, reject.Invalidf("lease plaintext is not one JSON object")
	}
	var active bool
	if err := json.Unmarshal(members["active"], &active); err != nil {
		return nil, nil, nil, reject.Invalidf("lease active must be a boolean")
	}
	want := []string{"v", "origin", "generation", "active"}
	if active {
		want = append(want, "app_profile", "transport", "endpoint", "subscriptions")
	}
	for k := range members {
		if !slices.Contains(want, k) {
			return nil, nil, nil, reject.Invalidf("unknown field %q", groupid.Clip(k))
		}
	}
	for _, k := range want {
		if _, ok := members[k]; !ok {
			return nil, nil, nil, reject.Invalidf("lease lacks %s", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.DisallowUnknownFields()
	var l Lease
	if err := dec.Decode(&l); err != nil {
		return nil, nil, nil, reject.Invalidf("lease schema: %s", groupid.Clip(err.Error()))
	}
	switch {
	case l.V != leaseVersion:
		return nil, nil, nil, reject.Invalidf("lease v must be %d", leaseVersion)
	case l.Generation < 1 || l.Generation > 1<<53-1:
		return nil, nil, nil, reject.Invalidf("lease generation must be a positive integer")
	case l.Origin != x.Origin:
		return nil, nil, nil, reject.Invalidf("origin mismatch")
	}
	if !active {
		return &l, nil, nil, nil
	}
	i := slices.IndexFunc(x.Profiles, func(p AppProfile) bool { return p.ID == l.AppProfile })
	switch {
	case i < 0:
		return nil, nil, nil, reject.Invalidf("app_profile %q is not advertised", groupid.Clip(l.AppProfile))
	case x.Profiles[i].Transport != l.Transport:
		return nil, nil, nil, reject.Invalidf("transport mismatch")
	case l.Endpoint == "" || len(l.Endpoint) > MaxLeaseEndpoint:
		return nil, nil, nil, reject.Invalidf("lease endpoint must be 1 to %d bytes", MaxLeaseEndpoint)
	case len(l.AppProfile) > MaxLeaseString || len(l.Transport) > MaxLeaseString:
		return nil, nil, nil, reject.Invalidf("lease strings are at most %d bytes", MaxLeaseString)
	case len(l.Subscriptions) == 0:
		return nil, nil, nil, reject.Invalidf("an active lease needs at least one subscription")
	case len(l.Subscriptions) > MaxLeaseSubscriptions:
		return nil, nil, nil, reject.Invalidf("lease quota exceeded: at most %d subscriptions", MaxLeaseSubscriptions)
	}
	var filters, ignore []nostr.Filter
	for _, sub := range l.Subscriptions {
		if !slices.Contains(LeaseClasses, sub.Class) {
			return nil, nil, nil, reject.Invalidf("class not supported")
		}
		if sub.Suppress != nil && sub.Suppress.PTagsMax < 1 {
			return nil, nil, nil, reject.Invalidf("suppress p_tags_max must be a positive integer")
		}
		f, err := LeaseFilter(sub.Filter, author, true)
		if err != nil {
			return nil, nil, nil, err
		}
		filters = append(filters, f)
		if len(sub.Ignore) > MaxLeaseIgnore {
			return nil, nil, nil, reject.Invalidf("at most %d ignore filters per subscription", MaxLeaseIgnore)
		}
		for _, raw := range sub.Ignore {
			g, err := LeaseFilter(raw, author, false)
			if err != nil {
				return nil, nil, nil, err
			}
			ignore = append(ignore, g)
		}
	}
	return &l, filters, ignore, nil
}

// LeaseFilter checks one lease filter (NIP-PL's filter constraints) and
// returns it as a NIP-01 filter: only kinds, authors, #p, #h and #e; kinds
// 1..MaxLeaseKinds from PushKinds; exact 64-hex authors, #p and #e; #p the
// author only; #h valid group ids; and, when narrowed is asked (a
// subscription's filter, not an ignore filter), at least one of #p,
// 1..MaxLeaseH #h, or 1..MaxLeaseAuthors authors.
func LeaseFilter(raw json.RawMessage, author string, narrowed bool) (nostr.Filter, error) {
	var f nostr.Filter
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return f, reject.Invalidf("lease filter is not a JSON object")
	}
	lists := map[string][]string{}
	for k, v := range members {
		switch k {
		case "kinds":
			if err := json.Unmarshal(v, &f.Kinds); err != nil {
				return f, reject.Invalidf("lease filter kinds must be integers")
			}
		case "authors", "#p", "#h", "#e":
			var vals []string
			if err := json.Unmarshal(v, &vals); err != nil {
				return f, reject.Invalidf("lease filter %s must be strings", k)
			}
			lists[k] = vals
		case "since", "until", "ids", "limit", "search":
			return f, reject.Invalidf("lease filter may not use %s", k)
		default:
			return f, reject.Invalidf("lease filter member %q is not allowed", groupid.Clip(k))
		}
	}
	if len(f.Kinds) == 0 || len(f.Kinds) > MaxLeaseKinds {
		return f, reject.Invalidf("lease filter needs 1 to %d kinds", MaxLeaseKinds)
	}
	for _, k := range f.Kinds {
		if !slices.Contains(PushKinds, k) {
			return f, reject.Invalidf("kind not push-eligible: %d", k)
		}
	}
	for name, vals := range lists {
		limit := MaxLeaseTagValues
		switch name {
		case "#h":
			limit = MaxLeaseH
		case "authors":
			limit = MaxLeaseAuthors
		}
		if len(vals) == 0 || len(vals) > limit {
			return f, reject.Invalidf("lease filter %s needs 1 to %d values", name, limit)
		}
		for _, v := range vals {
			switch {
			case name == "#h" && !groupid.Valid(v):
				return f, reject.Invalidf("lease filter #h %q is not a group id (%s)", groupid.Clip(v), groupid.Rule)
			case name != "#h" && !exactHex(v):
				return f, reject.Invalidf("non-exact match value")
			case name == "#p" && v != author:
				return f, reject.Invalidf("p-tag must be self")
			}
		}
	}
	if narrowed && lists["#p"] == nil && lists["#h"] == nil && lists["authors"] == nil {
		return f, reject.Invalidf("lease filter not narrowed")
	}
	f.Authors = lists["authors"]
	f.Tags = nostr.TagMap{}
	for _, name := range []string{"#p", "#h", "#e"} {
		if vals, ok := lists[name]; ok {
			if name == "#h" {
				vals = canonicalGroups(vals)
			}
			f.Tags[strings.TrimPrefix(name, "#")] = vals
		}
	}
	return f, nil
}

func canonicalGroups(vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = groupid.Canonical(v)
	}
	return out
}

// exactHex reports whether s is exactly 64 lowercase hex characters.
func exactHex(s string) bool {
	v, ok := filter.Hex64(s)
	return ok && v == s
}

// noDuplicateKeys walks plain and refuses an object with a key twice.
func noDuplicateKeys(plain []byte) error {
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.UseNumber()
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return reject.Invalidf("lease plaintext is not JSON")
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return reject.Invalidf("lease plaintext is not JSON")
				}
				k, _ := kt.(string)
				if seen[k] {
					return reject.Invalidf("duplicate key %q", groupid.Clip(k))
				}
				seen[k] = true
				if err := walk(); err != nil {
					return err
				}
			}
		case '[':
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		if err != nil {
			return reject.Invalidf("lease plaintext is not JSON")
		}
		return nil
	}
	if err := walk(); err != nil {
		return err
	}
	if dec.More() {
		return reject.Invalidf("lease plaintext is more than one JSON value")
	}
	return nil
}

// Wake is the body of a gateway wake (buzz-push-gateway's delivery
// request): no event, lease, channel or content, only the endpoint grant
// the lease carries, a request id and how long the wake is worth sending.
type Wake struct {
	V             int    `json:"v"`
	EndpointGrant string `json:"endpoint_grant"`
	RequestID     string `json:"request_id"`
	ExpiresAt     int64  `json:"expires_at"`
}

// NewWake is the wake for endpoint grant, sent at now with request id.
func NewWake(grant, requestID string, now int64) Wake {
	return Wake{V: WakeWireVersion, EndpointGrant: grant, RequestID: requestID, ExpiresAt: now + wakeLifetime}
}

// Descriptor is NIP-PL's push descriptor in NIP-11.
type Descriptor struct {
	Origin       string              `json:"origin"`
	Keys         []DescriptorKey     `json:"keys"`
	AppProfiles  []AppProfile        `json:"app_profiles"`
	PushKinds    []int               `json:"push_kinds"`
	UrgentKinds  []int               `json:"urgent_kinds"`
	HGrammar     string              `json:"h_grammar"`
	ClassSupport map[string][]string `json:"class_support"`
	Limitation   map[string]int      `json:"limitation"`
}

// DescriptorKey is one executor encryption key.
type DescriptorKey struct {
	ID      string `json:"id"`
	Pubkey  string `json:"pubkey"`
	Current bool   `json:"current"`
}

// NewDescriptor describes this executor for origin with executor key
// pubkey and the gateway's app profiles.
func NewDescriptor(origin, pubkey string, profiles []AppProfile) *Descriptor {
	support := map[string][]string{}
	for _, p := range profiles {
		support[p.Transport] = slices.Clone(LeaseClasses)
	}
	return &Descriptor{
		Origin:       origin,
		Keys:         []DescriptorKey{{ID: ExecutorKeyID, Pubkey: pubkey, Current: true}},
		AppProfiles:  slices.Clone(profiles),
		PushKinds:    slices.Clone(PushKinds),
		UrgentKinds:  []int{},
		HGrammar:     LeaseHGrammar,
		ClassSupport: support,
		Limitation: map[string]int{
			"max_lease_ttl": MaxLeaseTTL, "max_leases_per_pubkey": MaxLeasesPerKey,
			"max_subscriptions_per_lease": MaxLeaseSubscriptions, "max_kinds": MaxLeaseKinds,
			"max_authors": MaxLeaseAuthors, "max_h": MaxLeaseH, "max_tag_values": MaxLeaseTagValues,
			"max_ignore": MaxLeaseIgnore, "max_content_len": MaxLeaseContent,
			"max_plaintext_len": MaxLeasePlaintext, "max_endpoint_len": MaxLeaseEndpoint,
			"max_string_len": MaxLeaseString,
		},
	}
}

// ParseProfiles reads PUSH_APP_PROFILES: "id=transport,id=transport".
func ParseProfiles(s string) ([]AppProfile, error) {
	var out []AppProfile
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, tr, ok := strings.Cut(part, "=")
		if !ok || id == "" || !slices.Contains([]string{"apns", "fcm", "unifiedpush"}, tr) {
			return nil, fmt.Errorf("push app profile %q: want id=apns|fcm|unifiedpush", part)
		}
		out = append(out, AppProfile{ID: id, Transport: tr})
	}
	return out, nil
}
