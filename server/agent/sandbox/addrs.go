package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// This file holds the addresses the proxy refuses to dial: the server's own
// machine, its networks and its cloud's metadata services. An allowed name
// proves nothing about where it leads: its owner (or whoever answers its
// DNS) may point it at 127.0.0.1 at any time, so the proxy resolves names
// itself and checks every address it would dial.

// refusedRange is a range of addresses the proxy does not dial unless
// AllowAddresses allows them.
type refusedRange struct {
	prefix netip.Prefix
	class  string // what the range is, for messages: "a loopback address"
}

func ranges(class string, prefixes ...string) []refusedRange {
	out := make([]refusedRange, len(prefixes))
	for i, p := range prefixes {
		out[i] = refusedRange{netip.MustParsePrefix(p), class}
	}
	return out
}

// refusedRanges are the special-purpose ranges of the IANA registries that
// lead to the host, its networks or nowhere public. The first that holds an
// address names it, so narrower ranges come first.
var refusedRanges = concat(
	// IPv4.
	ranges("an unspecified address", "0.0.0.0/32"),
	ranges(`a "this network" address`, "0.0.0.0/8"),
	ranges("a loopback address", "127.0.0.0/8"),
	ranges("a private address", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	ranges("a shared (carrier-grade NAT) address", "100.64.0.0/10"),
	ranges("a link-local address", "169.254.0.0/16"),
	ranges("an IETF protocol address", "192.0.0.0/24"),
	ranges("a documentation address", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
	ranges("a 6to4 relay address", "192.88.99.0/24"),
	ranges("a benchmarking address", "198.18.0.0/15"),
	ranges("a multicast address", "224.0.0.0/4"),
	ranges("the broadcast address", "255.255.255.255/32"),
	ranges("a reserved address", "240.0.0.0/4"),
	// IPv6. IPv4-mapped addresses (::ffff:0:0/96) never get here: they
	// are checked as the IPv4 addresses they are.
	ranges("an unspecified address", "::/128"),
	ranges("a loopback address", "::1/128"),
	ranges("an IPv4-compatible address", "::/96"),
	ranges("an IPv4-translated address", "::ffff:0:0:0/96"),
	ranges("a local-use NAT64 address", "64:ff9b:1::/48"),
	ranges("a discard-only address", "100::/64"),
	ranges("a unique-local address", "fc00::/7"),
	ranges("a link-local address", "fe80::/10"),
	ranges("a site-local address", "fec0::/10"),
	ranges("a multicast address", "ff00::/8"),
	ranges("an IETF protocol address", "2001::/23"),
	ranges("a documentation address", "2001:db8::/32", "3fff::/20"),
	// Outside 2000::/3, the global unicast space, nothing is public.
	ranges("a reserved address", "::/3", "4000::/2", "8000::/1"),
)

// metadataAddresses are the cloud platforms' metadata and credential
// services. Most lie in a refused range already; they are named apart so
// that allowing a range that holds one (169.254.0.0/16, fc00::/7) does not
// allow it: only an entry of that one address does.
var metadataAddresses = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, Google Cloud, Azure, Oracle, DigitalOcean, OpenStack...
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
	netip.MustParseAddr("169.254.170.23"),  // AWS EKS pod identity
	netip.MustParseAddr("169.254.0.23"),    // Tencent Cloud
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud (legacy)
	netip.MustParseAddr("168.63.129.16"),   // Azure WireServer, a public address
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("fd00:ec2::23"),    // AWS EKS pod identity over IPv6
	netip.MustParseAddr("fd20:ce::254"),    // Google Cloud over IPv6
}

// Prefixes whose addresses carry an IPv4 address that the network, not
// the host, reaches: checked as that address.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96") // the IPv4 address in the last 32 bits
	sixToFour   = netip.MustParsePrefix("2002::/16")    // the IPv4 address in bits 16 to 47
)

func concat(lists ...[]refusedRange) []refusedRange {
	var out []refusedRange
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// classify says why the proxy refuses addr ("" if it does not), and
// whether addr is a metadata service, which only an entry of that very
// address allows. addr has no zone and is not IPv4-mapped.
func classify(addr netip.Addr) (class string, metadata bool) {
	if addr.Is6() {
		var embedded netip.Addr
		b := addr.As16()
		switch {
		case nat64Prefix.Contains(addr):
			embedded = netip.AddrFrom4([4]byte(b[12:16]))
		case sixToFour.Contains(addr):
			embedded = netip.AddrFrom4([4]byte(b[2:6]))
		}
		if embedded.IsValid() {
			kind := "a NAT64"
			if sixToFour.Contains(addr) {
				kind = "a 6to4"
			}
			if class, metadata := classify(embedded); class != "" {
				return fmt.Sprintf("%s form of %s (%s)", kind, class, embedded), metadata
			}
			return "", false
		}
	}
	for _, m := range metadataAddresses {
		if addr == m {
			return "a cloud metadata address", true
		}
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(addr) {
			return r.class, false
		}
	}
	return "", false
}

// addressPolicy decides which addresses the proxy dials: every address
// but the refused ones, and of those the ones AllowAddresses allows.
type addressPolicy struct {
	allow []netip.Prefix
}

// errRefusedAddress is wrapped by the error check returns for an address
// the proxy refuses.
var errRefusedAddress = errors.New("refused address")

// check returns nil if the proxy may dial addr, else an error saying what
// addr is. An address with a zone (fe80::1%eth0) is always refused.
func (p *addressPolicy) check(addr netip.Addr) error {
	if addr.Zone() != "" {
		return fmt.Errorf("%w: %s has a zone (a link-local address)", errRefusedAddress, addr)
	}
	addr = addr.Unmap()
	class, metadata := classify(addr)
	if class == "" {
		return nil
	}
	for _, a := range p.allow {
		if a.Contains(addr) && (!metadata || a.IsSingleIP()) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is %s", errRefusedAddress, addr, class)
}

// parseAllowAddresses checks and parses the AllowAddresses entries: an
// address ("10.0.0.5", "fd00::5") or a network in CIDR notation
// ("10.0.0.0/24"). Like AllowHosts, strict: an entry that would quietly
// allow more, or nothing, than it seems to is refused.
func parseAllowAddresses(entries []string) (*addressPolicy, error) {
	p := &addressPolicy{}
	for _, e := range entries {
		prefix, err := parseAllowAddress(e)
		if err != nil {
			return nil, fmt.Errorf("sandbox: AllowAddresses entry %q: %w", e, err)
		}
		p.allow = append(p.allow, prefix)
	}
	return p, nil
}

func parseAllowAddress(e string) (netip.Prefix, error) {
	var prefix netip.Prefix
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return prefix, errors.New("not an address or a network in CIDR notation (such as 10.0.0.5 or 10.0.0.0/24)")
		}
		if p != p.Masked() {
			return prefix, fmt.Errorf("the network has host bits set: write %s", p.Masked())
		}
		if p.Bits() == 0 {
			return prefix, errors.New("it would allow every address, and with them the server's own machine: name the networks the agent needs")
		}
		prefix = p
	} else {
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]"))
		if err != nil {
			return prefix, errors.New("not an address or a network in CIDR notation (such as 10.0.0.5 or 10.0.0.0/24)")
		}
		if a.Zone() != "" {
			return prefix, errors.New("an IPv6 zone is not allowed")
		}
		prefix = netip.PrefixFrom(a, a.BitLen())
	}
	if prefix.Addr().Is4In6() {
		return prefix, errors.New("an IPv4-mapped address: write the IPv4 address or network itself")
	}
	if !overlapsRefused(prefix) {
		return prefix, errors.New("the proxy does not refuse these addresses, so there is nothing to allow: list the host in AllowHosts")
	}
	return prefix, nil
}

// overlapsRefused reports whether prefix holds an address the proxy
// refuses.
func overlapsRefused(prefix netip.Prefix) bool {
	for _, m := range metadataAddresses {
		if prefix.Contains(m) {
			return true
		}
	}
	for _, r := range refusedRanges {
		if prefix.Overlaps(r.prefix) {
			return true
		}
	}
	// NAT64 and 6to4 addresses are refused when they carry a refused IPv4
	// address: a network within those prefixes may hold some.
	return prefix.Overlaps(nat64Prefix) || prefix.Overlaps(sixToFour)
}
