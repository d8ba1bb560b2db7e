package sandbox

import (
	"strings"
	"testing"
)

func TestParseAllowlist(t *testing.T) {
	valid := []string{"api.anthropic.com", "API.Example.com:8443", "*.example.com", "*.googleapis.com:443",
		"127.0.0.1:8080", "[2001:db8::1]", "[::1]:8443", "localhost", "a-b.c0.io"}
	if _, err := parseAllowlist(valid); err != nil {
		t.Fatalf("parseAllowlist(%q): %v", valid, err)
	}
	tests := []struct{ entry, want string }{
		{"", "empty"},
		{"https://api.example.com", "not a URL"},
		{"api.example.com/v1", "nothing else"},
		{"user@example.com", "nothing else"},
		{"api example.com", "nothing else"},
		{"api.example.com:", "not a number"},
		{"api.example.com:0", "not a number"},
		{"api.example.com:65536", "not a number"},
		{"api.example.com:0443", "not a number"},
		{"api.example.com:https", "not a number"},
		{"::1", "brackets"},
		{"2001:db8::1:443", "brackets"},
		{"*", "only as the first label"},
		{"*.com", "every host under"},
		{"*.*.example.com", "not a host name"},
		{"api.*.example.com", "only as the first label"},
		{"*example.com", "only as the first label"},
		{"*.127.0.0.1", "not to IP addresses"},
		{"-api.example.com", "not a host name"},
		{"api..example.com", "not a host name"},
		{"api.example.com.", "not a host name"},
		{"api_x.example.com", "character"},
		{"[fe80::1%eth0]", "zone"},
		{strings.Repeat("a", 64) + ".com", "not a host name"},
	}
	for _, tt := range tests {
		_, err := parseAllowlist([]string{tt.entry})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "AllowHosts entry") {
			t.Errorf("parseAllowlist(%q) = %v, want an error about %q", tt.entry, err, tt.want)
		}
	}
}

func TestAllowlistMatch(t *testing.T) {
	a, err := parseAllowlist([]string{"api.anthropic.com", "Uploads.Example.com:8443", "*.example.org", "127.0.0.1:9000", "[::1]:9000"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target string
		addr   string // "" if refused
	}{
		{"api.anthropic.com:443", "api.anthropic.com:443"},
		{"API.Anthropic.COM:443", "api.anthropic.com:443"},
		{"api.anthropic.com:80", ""},
		{"api.anthropic.com", ""}, // no port: not a CONNECT target
		{"anthropic.com:443", ""},
		{"evil-api.anthropic.com:443", ""},
		{"api.anthropic.com.evil.net:443", ""},
		{"uploads.example.com:8443", "uploads.example.com:8443"},
		{"uploads.example.com:443", ""},
		{"a.example.org:443", "a.example.org:443"},
		{"a.b.example.org:443", "a.b.example.org:443"},
		{"example.org:443", ""},
		{"badexample.org:443", ""},
		{"a.example.org:8443", ""},
		{"127.0.0.1:9000", "127.0.0.1:9000"},
		{"127.0.0.1:9001", ""},
		{"127.0.0.2:9000", ""},
		{"[::1]:9000", "[::1]:9000"},
		{"[0:0::1]:9000", "[::1]:9000"},
		{"localhost:9000", ""},
		{"api.anthropic.com:0443", ""},
		{"api.anthropic.com:+443", ""},
		{"api_anthropic.com:443", ""},
		{"/etc/passwd", ""},
	}
	for _, tt := range tests {
		addr, ok := a.match(tt.target)
		if ok != (tt.addr != "") || ok && addr != tt.addr {
			t.Errorf("match(%q) = %q, %v; want %q", tt.target, addr, ok, tt.addr)
		}
	}
}
