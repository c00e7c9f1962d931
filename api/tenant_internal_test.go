package api

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

var addrCases = []struct {
	name, peer, xff, want string // want "" means no address
}{
	{"untrusted peer, header ignored", "198.51.100.1:4000", "203.0.113.9", "198.51.100.1"},
	{"trusted peer, no header", "127.0.0.1:4000", "", "127.0.0.1"},
	{"trusted peer names the client", "127.0.0.1:4000", "203.0.113.9", "203.0.113.9"},
	{"right-most untrusted hop wins", "127.0.0.1:4000", "192.0.2.1, 203.0.113.9", "203.0.113.9"},
	{"trusted hops are skipped", "127.0.0.1:4000", "203.0.113.9, 10.0.0.5", "203.0.113.9"},
	{"two headers", "127.0.0.1:4000", "203.0.113.9|10.0.0.5", "203.0.113.9"},
	{"every hop trusted", "127.0.0.1:4000", "10.0.0.1, 10.0.0.2", "10.0.0.1"},
	{"hop with a port", "127.0.0.1:4000", "203.0.113.9:5555", "203.0.113.9"},
	{"IPv6 hop with a port", "127.0.0.1:4000", "[2001:db8::1]:443", "2001:db8::1"},
	{"IPv4-mapped hop", "127.0.0.1:4000", "::ffff:203.0.113.9", "203.0.113.9"},
	{"IPv6 peer", "[2001:db8::2]:4000", "", "2001:db8::2"},
	{"malformed hop", "127.0.0.1:4000", "unknown", ""},
	{"empty hop", "127.0.0.1:4000", "203.0.113.9,,", ""},
	{"zone", "127.0.0.1:4000", "fe80::1%eth0", ""},
	{"too many hops", "127.0.0.1:4000", strings.Repeat("10.0.0.1,", 40) + "203.0.113.9", ""},
	{"bad peer", "nonsense", "", ""},
}

func addrServer() *Server {
	return &Server{opts: Options{Identity: &Identity{TrustedProxies: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}}}}
}

func TestClientAddr(t *testing.T) {
	s := addrServer()
	for _, tt := range addrCases {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.peer
			for h := range strings.SplitSeq(tt.xff, "|") {
				if h != "" {
					r.Header.Add("X-Forwarded-For", h)
				}
			}
			got := s.clientAddr(r)
			if (tt.want == "" && got.IsValid()) || (tt.want != "" && got.String() != tt.want) {
				t.Fatalf("clientAddr = %v, want %q", got, tt.want)
			}
		})
	}
}

func FuzzClientAddr(f *testing.F) {
	for _, tt := range addrCases {
		f.Add(tt.peer, tt.xff)
	}
	s := addrServer()
	f.Fuzz(func(t *testing.T, peer, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", xff)
		got := s.clientAddr(r)
		if !got.IsValid() {
			return
		}
		if got.Is4In6() || got.Zone() != "" {
			t.Fatalf("clientAddr = %v: not canonical", got)
		}
		// The answer is the peer, or an address the header names.
		if p, err := netip.ParseAddrPort(peer); (err != nil || p.Addr().Unmap() != got) && !mentions(xff, got) {
			t.Fatalf("clientAddr(%q, %q) = %v, which neither names", peer, xff, got)
		}
	})
}

// mentions reports whether some hop of xff parses to a.
func mentions(xff string, a netip.Addr) bool {
	for hop := range strings.SplitSeq(xff, ",") {
		if h, err := parseHop(strings.TrimSpace(hop)); err == nil && h == a {
			return true
		}
	}
	return false
}

var basicCases = []struct {
	in, id, secret string
	ok             bool
}{
	{"ZWFyc2hvdC0xOmVzY19hYmM=", "earshot-1", "esc_abc", true}, // earshot-1:esc_abc
	{"YSUzQWI6YyUyNmQ=", "a:b", "c&d", true},                   // form-encoded a%3Ab:c%26d
	{"bm9jb2xvbg==", "", "", false},                            // nocolon
	{"OnNlY3JldA==", "", "", false},                            // :secret
	{"aWQ6", "", "", false},                                    // id:
	{"!!!", "", "", false},
	{"JXp6OnM=", "", "", false}, // %zz:s
	{"", "", "", false},
}

func TestParseBasic(t *testing.T) {
	for _, tt := range basicCases {
		id, secret, ok := parseBasic(tt.in)
		if ok != tt.ok || id != tt.id || secret != tt.secret {
			t.Errorf("parseBasic(%q) = %q, %q, %v", tt.in, id, secret, ok)
		}
	}
}

func FuzzParseBasic(f *testing.F) {
	for _, tt := range basicCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, secret, ok := parseBasic(s); ok && (id == "" || secret == "") {
			t.Fatalf("parseBasic(%q) accepted an empty id or secret", s)
		}
	})
}
