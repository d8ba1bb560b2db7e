package clientip

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestAddr(t *testing.T) {
	proxies := NewProxies([]netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("2001:db8:1::/48"),
		netip.MustParsePrefix("192.0.2.7/32"),
	})
	for _, c := range []struct {
		name    string
		p       Proxies
		remote  string
		headers map[string][]string
		want    string // "" for the zero Addr
	}{
		{name: "no proxy trusted: headers ignored", p: Proxies{}, remote: "203.0.113.5:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, want: "203.0.113.5"},
		{name: "untrusted peer: headers ignored", p: proxies, remote: "203.0.113.5:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "Forwarded": {"for=198.51.100.2"}}, want: "203.0.113.5"},
		{name: "trusted peer, no header", p: proxies, remote: "10.1.2.3:4000", want: "10.1.2.3"},
		{name: "trusted peer names the client", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, want: "198.51.100.1"},
		// The client wrote 1.1.1.1 itself; the proxy appended what it saw.
		{name: "spoofed entries left of the proxy's are ignored", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"1.1.1.1, 198.51.100.1"}}, want: "198.51.100.1"},
		{name: "a chain of trusted proxies", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"1.1.1.1, 198.51.100.1, 10.9.9.9", "192.0.2.7"}}, want: "198.51.100.1"},
		{name: "every hop trusted: the leftmost", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"10.3.3.3, 10.4.4.4"}}, want: "10.3.3.3"},
		{name: "garbage from the proxy: the proxy", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.1, not-an-ip"}}, want: "10.1.2.3"},
		{name: "garbage left of a vouched address stops the walk there", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"unknown, 10.5.5.5"}}, want: "10.5.5.5"},
		{name: "Forwarded wins over X-Forwarded-For", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.9"}, "Forwarded": {`for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https`}}, want: "2001:db8:cafe::17"},
		{name: "Forwarded element without for= is unknown", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"Forwarded": {"for=198.51.100.1, proto=https"}}, want: "10.1.2.3"},
		{name: "Forwarded: case and spacing", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"Forwarded": {"proto=https; For=198.51.100.3"}}, want: "198.51.100.3"},
		{name: "address with port in X-Forwarded-For", p: proxies, remote: "10.1.2.3:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.1:5555"}}, want: "198.51.100.1"},
		{name: "IPv6 proxy", p: proxies, remote: "[2001:db8:1::5]:443",
			headers: map[string][]string{"X-Forwarded-For": {"[2001:db8:2::9]"}}, want: "2001:db8:2::9"},
		{name: "IPv4-mapped peer is the IPv4 address", p: proxies, remote: "[::ffff:10.1.2.3]:80",
			headers: map[string][]string{"X-Forwarded-For": {"::ffff:198.51.100.1"}}, want: "198.51.100.1"},
		{name: "a RemoteAddr that is no address", p: proxies, remote: "pipe", want: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
			for k, vs := range c.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			got := c.p.Addr(r)
			if c.want == "" {
				if got.IsValid() {
					t.Fatalf("Addr = %v, want none", got)
				}
				return
			}
			if want := netip.MustParseAddr(c.want); got != want {
				t.Fatalf("Addr = %v, want %v", got, want)
			}
		})
	}
}

func TestNewProxiesMasksAndSkipsInvalid(t *testing.T) {
	p := NewProxies([]netip.Prefix{netip.MustParsePrefix("10.1.2.3/8"), {}})
	if !p.Trusts(netip.MustParseAddr("10.200.0.1")) || p.Trusts(netip.MustParseAddr("11.0.0.1")) {
		t.Fatal("10.1.2.3/8 must trust 10.0.0.0/8 and nothing else")
	}
}
