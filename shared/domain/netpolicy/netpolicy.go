// Package netpolicy is the one rule of where the relay may connect on a
// user's behalf (push callbacks today, workflow webhooks next): which
// addresses are public (PublicAddr, applied by a dialer to every address
// it is about to connect to, after DNS resolution) and which host names
// and literals a stored URL may carry (CheckHost, at write time). Pure:
// no I/O, no resolution.
package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrNotPublic is a host or address the relay never connects to.
var ErrNotPublic = errors.New("not a public address")

// globalUnicast6 is IPv6's global unicast space (RFC 4291 §2.4): every
// other IPv6 address (::/8 with ::/128, ::1, the IPv4-compatible ::/96 and
// the IPv4-translated ::ffff:0:0:0/96, 100::/64 and 100:0:0:1::/64,
// 64:ff9b::/96 and 64:ff9b:1::/48, 5f00::/16, fc00::/7, fe80::/10,
// fec0::/10, ff00::/8) is refused, apart from the two forms that embed an
// IPv4 address classified as that address (mapped, NAT64 well-known).
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// Embedding prefixes whose last 32 bits are an IPv4 address that decides.
var (
	mapped4  = netip.MustParsePrefix("::ffff:0:0/96") // IPv4-mapped (RFC 4291)
	nat64WKP = netip.MustParsePrefix("64:ff9b::/96")  // NAT64 well-known prefix (RFC 6052)
)

// special4 are the IPv4 blocks of IANA's IPv4 special-purpose address
// registry that are not globally reachable (the few marked global there,
// AS112 and AMT, are public), with multicast and the deprecated 6to4
// relay anycast.
var special4 = prefixes(
	"0.0.0.0/8",          // this network (RFC 791)
	"10.0.0.0/8",         // private (RFC 1918)
	"100.64.0.0/10",      // shared address space, CGNAT (RFC 6598)
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local (RFC 3927)
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments, DS-Lite, NAT64 discovery (RFC 6890, 7335, 7050)
	"192.0.2.0/24",       // TEST-NET-1 (RFC 5737)
	"192.88.99.0/24",     // 6to4 relay anycast, deprecated (RFC 7526)
	"192.168.0.0/16",     // private
	"198.18.0.0/15",      // benchmarking (RFC 2544)
	"198.51.100.0/24",    // TEST-NET-2
	"203.0.113.0/24",     // TEST-NET-3
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved (RFC 1112)
	"255.255.255.255/32", // limited broadcast
)

// special6 are the blocks inside 2000::/3 that IANA's IPv6 special-purpose
// registry lists as not globally reachable, with 6to4 (its embedded IPv4
// goes through relays nobody should reach for us: refused whole).
var special6 = prefixes(
	"2001::/23",     // IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID (RFC 2928)
	"2001:db8::/32", // documentation (RFC 3849)
	"2002::/16",     // 6to4 (RFC 3056, deprecated by RFC 7526)
	"3fff::/20",     // documentation (RFC 9637)
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// PublicAddr reports whether the relay may connect to ip: a globally
// reachable unicast address. IPv4: none of special4. IPv6: in 2000::/3
// and none of special6, or an IPv4-mapped or NAT64 (64:ff9b::/96) address
// whose IPv4 is public; never an address with a zone.
func PublicAddr(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return false
	}
	if ip.Is6() && (mapped4.Contains(ip) || nat64WKP.Contains(ip)) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if ip.Is4() {
		return !within(ip, special4)
	}
	return globalUnicast6.Contains(ip) && !within(ip, special6)
}

func within(ip netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// CheckHost is the write-time rule for the host of a URL the relay will
// connect to (url.URL.Hostname(): no brackets, no port): an IP literal
// must be PublicAddr; a name must not be one of the names that never leave
// the machine or its network (localhost, *.localhost, *.local, *.internal,
// *.home.arpa, a single label), nor a number a resolver would read as an
// IPv4 address (127.1, 2130706433, 0x7f.1: a name's last label is never
// numeric). A name is checked again after resolution, by the dialer
// (PublicAddr).
func CheckHost(host string) error {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "" {
		return fmt.Errorf("empty host: %w", ErrNotPublic)
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if !PublicAddr(ip) {
			return fmt.Errorf("%s: %w", h, ErrNotPublic)
		}
		return nil
	}
	if strings.ContainsAny(h, "%[]:") {
		return fmt.Errorf("%s: %w", h, ErrNotPublic)
	}
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	switch {
	case len(labels) < 2, last == "localhost", last == "local", last == "internal",
		strings.HasSuffix(h, ".home.arpa"), numericLabel(last):
		return fmt.Errorf("%s: not a public host name: %w", h, ErrNotPublic)
	}
	return nil
}

// numericLabel reports whether l is a number as inet_aton reads one
// (decimal, octal or 0x hex): never a top-level domain.
func numericLabel(l string) bool {
	if l == "" {
		return true
	}
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		if l == "" {
			return true
		}
		for _, c := range l {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range l {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
