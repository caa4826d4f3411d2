// Package hostport splits and compares the host[:port] of a Host header,
// a URL's authority or a configured host: the one place config, proxy,
// rewrite, the HTTPS redirect (server) and ssatd verify take a port off a
// host and decide when two host names are one. Listen addresses are
// net.Listen's and stay with net.SplitHostPort.
//
// The components are RFC 3986 §3.2.2's host, IPv6 brackets and all, and
// §3.2.3's port. A port that is present but empty ("host:") is no port:
// RFC 3986 §3.2.3 has producers omit it, and the WHATWG URL parser reads
// it as the scheme's default.
//
// A trailing dot: "example.com." is the absolute spelling of the DNS name
// "example.com" (RFC 1034 §3.1), so names compare without it (Fold,
// SameName). It is not dropped from what a client or a URL sent, though:
// the WHATWG host parser keeps it, so a page at "example.com." is another
// origin for the browser (its cookies, its storage), and a configured or
// allowed host is refused with one rather than stripped (config's
// checkHostPort, proxy's validHost), so that ssatd never writes links to
// a host the publisher did not name.
package hostport

import "strings"

// Split splits host[:port] at the colon before the port: the only colon
// outside an IPv6 literal's brackets. host keeps the brackets ("[::1]");
// port is "" when absent or empty. A host with two colons outside
// brackets (an IPv6 address written bare, or no host at all) has no port,
// as net.SplitHostPort refuses it. Split does not validate: anything that
// is not host:port comes back whole as host.
func Split(s string) (host, port string) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.IndexByte(s[i:], ']') >= 0 {
		return s, ""
	}
	if s[0] != '[' && strings.IndexByte(s[:i], ':') >= 0 {
		return s, ""
	}
	return s[:i], s[i+1:]
}

// Bare is host without the brackets of an IPv6 literal, as an address
// parser or a cookie's Domain takes it.
func Bare(host string) string {
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		return host[1 : len(host)-1]
	}
	return host
}

// Name is the bare host of host[:port] (Split, then Bare).
func Name(s string) string {
	h, _ := Split(s)
	return Bare(h)
}

// Fold is a host name as names compare: lower case (RFC 4343), without a
// trailing dot (RFC 1034 §3.1).
func Fold(name string) string {
	return trimDot(strings.ToLower(name))
}

// SameName reports whether two host[:port] values name the same host,
// ports aside: their bare hosts are equal in any letter case and with or
// without a trailing dot, as Fold compares. An empty host names none.
func SameName(a, b string) bool {
	a, b = Name(a), Name(b)
	return a != "" && strings.EqualFold(trimDot(a), trimDot(b))
}

// trimDot drops the trailing dot of an absolute name (RFC 1034 §3.1).
func trimDot(name string) string { return strings.TrimSuffix(name, ".") }
