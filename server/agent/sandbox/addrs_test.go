package sandbox

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestAddressPolicyRefuses: with no AllowAddresses, every address of the
// host, its networks and the cloud's metadata services is refused, in
// every spelling that leads there; public addresses are not.
func TestAddressPolicyRefuses(t *testing.T) {
	none := &addressPolicy{}
	refused := map[string]string{
		"127.0.0.1":        "loopback",
		"127.255.0.9":      "loopback",
		"::1":              "loopback",
		"::ffff:127.0.0.1": "loopback", // IPv4-mapped: dialed as 127.0.0.1
		"0.0.0.0":          "unspecified",
		"0.1.2.3":          "this network",
		"::":               "unspecified",
		"10.0.0.1":         "private",
		"172.16.5.4":       "private",
		"172.31.255.255":   "private",
		"192.168.1.1":      "private",
		"::ffff:10.0.0.1":  "private",
		"100.64.0.1":       "carrier-grade NAT",
		"169.254.1.1":      "link-local",
		"fe80::1":          "link-local",
		"fe80::1%eth0":     "zone",
		"fc00::1":          "unique-local",
		"fd12:3456::1":     "unique-local",
		"fec0::1":          "site-local",
		"224.0.0.1":        "multicast",
		"239.255.255.250":  "multicast",
		"ff02::1":          "multicast",
		"255.255.255.255":  "broadcast",
		"240.0.0.1":        "reserved",
		"192.0.2.1":        "documentation",
		"198.51.100.7":     "documentation",
		"203.0.113.9":      "documentation",
		"2001:db8::1":      "documentation",
		"3fff::1":          "documentation",
		"198.18.0.1":       "benchmarking",
		"192.0.0.8":        "IETF protocol",
		"2001::1":          "IETF protocol", // Teredo
		"192.88.99.1":      "6to4 relay",
		"::127.0.0.1":      "IPv4-compatible",
		"::ffff:0:7f00:1":  "IPv4-translated",
		"64:ff9b:1::1":     "local-use NAT64",
		"100::1":           "discard-only",
		"5f00::1":          "reserved",
		"1234::1":          "reserved",
		"c000::1":          "reserved",
		// NAT64 and 6to4 forms carry an IPv4 address that the network
		// reaches: checked as it.
		"64:ff9b::7f00:1":        "NAT64 form of a loopback address (127.0.0.1)",
		"64:ff9b::a00:1":         "NAT64 form of a private address",
		"64:ff9b::a9fe:a9fe":     "NAT64 form of a cloud metadata address (169.254.169.254)",
		"2002:7f00:1::1":         "6to4 form of a loopback address",
		"2002:c0a8:101::1":       "6to4 form of a private address",
		"169.254.169.254":        "cloud metadata",
		"::ffff:169.254.169.254": "cloud metadata",
		"169.254.170.2":          "cloud metadata",
		"100.100.100.200":        "cloud metadata",
		"168.63.129.16":          "cloud metadata",
		"192.0.0.192":            "cloud metadata",
		"fd00:ec2::254":          "cloud metadata",
		"fd20:ce::254":           "cloud metadata",
	}
	for s, want := range refused {
		err := none.check(netip.MustParseAddr(s))
		if !errors.Is(err, errRefusedAddress) || !strings.Contains(err.Error(), want) {
			t.Errorf("check(%s) = %v, want it refused as %q", s, err, want)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.215.14", "172.32.0.1", "100.128.0.1", "192.0.1.1",
		"2606:4700:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"} {
		if err := none.check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("check(%s) = %v, want it allowed: a public address", s, err)
		}
	}
}

// TestAddressPolicyAllows: AllowAddresses opens exactly what it names; a
// metadata address only by an entry of its own.
func TestAddressPolicyAllows(t *testing.T) {
	p, err := parseAllowAddresses([]string{"127.0.0.1", "10.0.0.0/8", "169.254.0.0/16", "fc00::/7", "[::1]"})
	if err != nil {
		t.Fatal(err)
	}
	for s, allowed := range map[string]bool{
		"127.0.0.1":        true,
		"::ffff:127.0.0.1": true, // the same address
		"127.0.0.2":        false,
		"::1":              true,
		"10.200.3.4":       true,
		"11.0.0.1":         true, // public
		"192.168.0.1":      false,
		"169.254.1.1":      true,
		"169.254.169.254":  false, // metadata: a network holding it is not enough
		"169.254.170.2":    false,
		"fd00::5":          true,
		"fd00:ec2::254":    false,
		"fe80::1":          false,
		"64:ff9b::7f00:1":  false, // a NAT64 form is another address
	} {
		if err := p.check(netip.MustParseAddr(s)); (err == nil) != allowed {
			t.Errorf("check(%s) = %v, want allowed %v", s, err, allowed)
		}
	}
	meta, err := parseAllowAddresses([]string{"169.254.169.254/32", "fd00:ec2::254"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"169.254.169.254", "fd00:ec2::254"} {
		if err := meta.check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("check(%s) = %v with an entry of that address", s, err)
		}
	}
	if err := meta.check(netip.MustParseAddr("169.254.170.2")); err == nil {
		t.Error("an entry of one metadata address allowed another")
	}
}

func TestParseAllowAddresses(t *testing.T) {
	valid := []string{"127.0.0.1", "10.0.0.0/8", "192.168.10.0/24", "::1", "[fd00::5]", "fc00::/7",
		"169.254.169.254", "64:ff9b::a00:5", "2002:a00:5::/48", "8.0.0.0/6"}
	if _, err := parseAllowAddresses(valid); err != nil {
		t.Fatalf("parseAllowAddresses(%q): %v", valid, err)
	}
	tests := []struct{ entry, want string }{
		{"", "not an address"},
		{"localhost", "not an address"},
		{"10.0.0.1:80", "not an address"},
		{"10.0.0.0/33", "not an address"},
		{"10.0.0.1/8", "write 10.0.0.0/8"},
		{"0.0.0.0/0", "every address"},
		{"::/0", "every address"},
		{"fe80::1%eth0", "zone"},
		{"::ffff:127.0.0.1", "IPv4-mapped"},
		{"::ffff:10.0.0.0/104", "IPv4-mapped"},
		{"8.8.8.8", "nothing to allow"},
		{"93.184.0.0/16", "nothing to allow"},
		{"2606:4700::/32", "nothing to allow"},
	}
	for _, tt := range tests {
		_, err := parseAllowAddresses([]string{tt.entry})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "AllowAddresses entry") {
			t.Errorf("parseAllowAddresses(%q) = %v, want an error about %q", tt.entry, err, tt.want)
		}
	}
}

// TestNewChecksAddresses: an AllowHosts entry that is a refused address
// stops New unless AllowAddresses allows it; AllowAddresses needs
// AllowHosts.
func TestNewChecksAddresses(t *testing.T) {
	bridge := []string{"/bin/true"}
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{AllowHosts: []string{"127.0.0.1:8080"}, Bridge: bridge}, `"127.0.0.1:8080": 127.0.0.1 is a loopback address, which the proxy refuses unless AllowAddresses allows it (add "127.0.0.1"`},
		{Config{AllowHosts: []string{"[::ffff:10.1.2.3]"}, Bridge: bridge}, `add "10.1.2.3"`},
		{Config{AllowHosts: []string{"169.254.169.254:80"}, AllowAddresses: []string{"169.254.0.0/16"}, Bridge: bridge}, "cloud metadata"},
		{Config{AllowHosts: []string{"[fd00:ec2::254]"}, AllowAddresses: []string{"fd00::/8"}, Bridge: bridge}, "cloud metadata"},
		{Config{AllowAddresses: []string{"10.0.0.0/8"}}, "AllowAddresses applies only to the hosts of AllowHosts"},
		{Config{AllowHosts: []string{"api.example.com"}, AllowAddresses: []string{"8.8.8.8"}, Bridge: bridge}, "nothing to allow"},
	} {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error about %q", tt.cfg, err, tt.want)
		}
	}
}
