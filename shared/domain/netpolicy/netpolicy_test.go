package netpolicy

import (
	"net/netip"
	"testing"
)

// TestPublicAddr: one row per block of IANA's IPv4 and IPv6
// special-purpose registries (its first and last address, and for the
// embedding forms the embedded address that decides), and public
// addresses of each family that must pass.
func TestPublicAddr(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
		why  string
	}{
		// Public.
		{"1.1.1.1", true, "public IPv4"},
		{"8.8.8.8", true, "public IPv4"},
		{"93.184.216.34", true, "public IPv4"},
		{"192.31.196.1", true, "AS112-v4, global in the registry"},
		{"192.52.193.1", true, "AMT, global in the registry"},
		{"192.175.48.1", true, "AS112 direct delegation, global"},
		{"2606:4700:4700::1111", true, "public IPv6"},
		{"2a00:1450:4001:82b::200e", true, "public IPv6"},
		{"2620:4f:8000::1", true, "AS112-v6 direct delegation, global"},
		{"::ffff:1.1.1.1", true, "IPv4-mapped public"},
		{"64:ff9b::1.1.1.1", true, "NAT64 well-known prefix, public IPv4"},
		// IPv4 special-purpose registry.
		{"0.0.0.0", false, "this host"},
		{"0.255.255.255", false, "this network, last"},
		{"10.0.0.1", false, "private 10/8"},
		{"10.255.255.255", false, "private 10/8, last"},
		{"100.64.0.1", false, "shared address space (CGNAT)"},
		{"100.127.255.255", false, "shared address space, last"},
		{"127.0.0.1", false, "loopback"},
		{"127.255.255.254", false, "loopback, last"},
		{"169.254.169.254", false, "link-local (cloud metadata)"},
		{"100.100.100.200", false, "shared address space (a cloud's metadata)"},
		{"64:ff9b::a00:1", false, "NAT64 well-known prefix of 10.0.0.1"},
		{"172.16.0.1", false, "private 172.16/12"},
		{"172.31.255.255", false, "private 172.16/12, last"},
		{"192.0.0.1", false, "IETF protocol assignments"},
		{"192.0.0.8", false, "IPv4 dummy address"},
		{"192.0.0.170", false, "NAT64/DNS64 discovery"},
		{"192.0.2.1", false, "TEST-NET-1"},
		{"192.88.99.1", false, "6to4 relay anycast (deprecated)"},
		{"192.168.1.1", false, "private 192.168/16"},
		{"198.18.0.1", false, "benchmarking"},
		{"198.19.255.255", false, "benchmarking, last"},
		{"198.51.100.1", false, "TEST-NET-2"},
		{"203.0.113.1", false, "TEST-NET-3"},
		{"224.0.0.1", false, "multicast"},
		{"239.255.255.255", false, "multicast, last"},
		{"240.0.0.1", false, "reserved"},
		{"255.255.255.255", false, "limited broadcast"},
		// IPv6 special-purpose registry and the spaces outside 2000::/3.
		{"::", false, "unspecified"},
		{"::1", false, "loopback"},
		{"::127.0.0.1", false, "IPv4-compatible (deprecated) loopback"},
		{"::1.1.1.1", false, "IPv4-compatible (deprecated), even of a public IPv4"},
		{"::ffff:127.0.0.1", false, "IPv4-mapped loopback"},
		{"::ffff:10.0.0.1", false, "IPv4-mapped private"},
		{"::ffff:169.254.169.254", false, "IPv4-mapped link-local"},
		{"::ffff:0:127.0.0.1", false, "IPv4-translated (SIIT) loopback"},
		{"::ffff:0:1.1.1.1", false, "IPv4-translated (SIIT)"},
		{"64:ff9b::127.0.0.1", false, "NAT64 well-known prefix, loopback IPv4"},
		{"64:ff9b::10.0.0.1", false, "NAT64 well-known prefix, private IPv4"},
		{"64:ff9b:1::1.1.1.1", false, "NAT64 local-use prefix"},
		{"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false, "NAT64 local-use prefix, last"},
		{"100::1", false, "discard-only"},
		{"100:0:0:1::1", false, "dummy IPv6 prefix"},
		{"2001::1", false, "Teredo"},
		{"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", false, "Teredo, last"},
		{"2001:1::1", false, "IETF protocol assignments (PCP anycast)"},
		{"2001:2::1", false, "benchmarking"},
		{"2001:10::1", false, "ORCHID (deprecated)"},
		{"2001:20::1", false, "ORCHIDv2"},
		{"2001:1ff:ffff::1", false, "IETF protocol assignments, last /23"},
		{"2001:db8::1", false, "documentation"},
		{"2002::1", false, "6to4"},
		{"2002:7f00:1::1", false, "6to4 of 127.0.0.1"},
		{"2002:0101:0101::1", false, "6to4 of a public IPv4 (refused whole)"},
		{"3fff::1", false, "documentation (RFC 9637)"},
		{"3fff:fff:ffff::1", false, "documentation, last"},
		{"5f00::1", false, "SRv6 SIDs"},
		{"fc00::1", false, "unique local"},
		{"fd12:3456::1", false, "unique local"},
		{"fe80::1", false, "link-local"},
		{"fe80::1%eth0", false, "link-local with a zone"},
		{"fec0::1", false, "site-local (deprecated)"},
		{"feff:ffff::1", false, "site-local, last"},
		{"ff02::1", false, "multicast"},
		{"ff0e::1", false, "global multicast"},
		{"2606:4700::1%eth0", false, "a zone on a global address"},
	} {
		ip, err := netip.ParseAddr(c.addr)
		if err != nil {
			t.Fatalf("%s: %v", c.addr, err)
		}
		if got := PublicAddr(ip); got != c.want {
			t.Errorf("PublicAddr(%s) = %v, want %v (%s)", c.addr, got, c.want, c.why)
		}
		if got := CheckHost(c.addr) == nil; got != c.want && ip.Zone() == "" {
			t.Errorf("CheckHost(%s) accepts = %v, want %v (%s)", c.addr, got, c.want, c.why)
		}
	}
	if PublicAddr(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}

// TestCheckHost: host names and numeric forms at write time.
func TestCheckHost(t *testing.T) {
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"push.example.com", true},
		{"nps.coracle.social", true},
		{"example.com.", true},
		{"1password.com", true},
		{"localhost", false},
		{"LOCALHOST", false},
		{"api.localhost", false},
		{"printer.local", false},
		{"metadata.google.internal", false},
		{"router.home.arpa", false},
		{"intranet", false},
		{"", false},
		{"127.1", false},
		{"2130706433", false},
		{"0x7f.0.0.1", false},
		{"0x7f000001", false},
		{"017700000001", false},
		{"10.1", false},
		{"fe80::1%25eth0", false},
		{"[::1]", false},
	} {
		if got := CheckHost(c.host) == nil; got != c.ok {
			t.Errorf("CheckHost(%q) accepts = %v, want %v", c.host, got, c.ok)
		}
	}
}

// FuzzPublicAddr: whatever the bytes, PublicAddr never panics, agrees with
// itself across the mapped form of an IPv4 address, and never calls an
// address public that Go's own predicates call loopback, private,
// link-local, multicast or unspecified; CheckHost never panics and refuses
// any literal PublicAddr refuses.
func FuzzPublicAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::ffff:0:127.0.0.1", "64:ff9b:1::1", "2002::1", "fec0::1", "1.1.1.1", "2606:4700::1", "0x7f.1", "fe80::1%eth0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = CheckHost(s)
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return
		}
		pub := PublicAddr(ip)
		if CheckHost(s) == nil && !pub {
			t.Fatalf("CheckHost accepts %s, PublicAddr refuses it", s)
		}
		if !pub {
			return
		}
		u := ip.Unmap()
		if u.IsLoopback() || u.IsPrivate() || u.IsLinkLocalUnicast() || u.IsMulticast() || u.IsUnspecified() || u.IsInterfaceLocalMulticast() {
			t.Fatalf("PublicAddr(%s) = true for a non-public address", s)
		}
		if ip.Is4() && !PublicAddr(netip.AddrFrom16(ip.As16())) {
			t.Fatalf("%s is public, its IPv4-mapped form is not", s)
		}
	})
}
