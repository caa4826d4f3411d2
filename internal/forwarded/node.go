package forwarded

import (
	"net/netip"
	"strings"
)

// NodeAddr is the address a node names (RFC 7239 §6): an IPv4 address or
// a bracketed IPv6 address, each with an optional port, which may be an
// obfuscated one ("_abc", §6.3) since the address is still known. The
// node "unknown" (§6.2) and obfuscated identifiers ("_hidden", §6.3) name
// no address. A bare IPv6 address is read too, as X-Forwarded-For entries
// and some proxies write it. IPv4-mapped IPv6 addresses are unmapped.
func NodeAddr(node string) (netip.Addr, bool) {
	name, port := node, ""
	if rest, ok := strings.CutPrefix(node, "["); ok {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return netip.Addr{}, false
		}
		name, port = rest[:end], rest[end+1:]
		a, err := netip.ParseAddr(name)
		if err != nil || !a.Is6() || !nodePort(port) {
			return netip.Addr{}, false
		}
		return a.Unmap(), true
	}
	if a, err := netip.ParseAddr(node); err == nil {
		return a.Unmap(), true // bare IPv4, or bare IPv6
	}
	if i := strings.LastIndexByte(node, ':'); i >= 0 {
		name, port = node[:i], node[i:]
	}
	a, err := netip.ParseAddr(name)
	if err != nil || !a.Is4() || !nodePort(port) {
		return netip.Addr{}, false
	}
	return a, true
}

// nodePort reports whether p is empty or ':' and a node-port (RFC 7239
// §6): 1 to 5 digits, or '_' and obfuscated characters.
func nodePort(p string) bool {
	if p == "" {
		return true
	}
	p, ok := strings.CutPrefix(p, ":")
	if !ok || p == "" {
		return false
	}
	if obf, ok := strings.CutPrefix(p, "_"); ok {
		return obfuscated(obf)
	}
	if len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

// obfuscated reports whether s is 1*( ALPHA / DIGIT / "." / "_" / "-" ),
// what follows the '_' of an obfuscated node or port (RFC 7239 §6.3).
func obfuscated(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
