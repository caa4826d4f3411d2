package proxy

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/ssatd/ssatd/internal/forwarded"
	"github.com/ssatd/ssatd/internal/hostport"
	"github.com/ssatd/ssatd/internal/openrtb"
)

// clientView is what the guest believes about the client-facing side of a
// request: who sent it, and which host and scheme links must point at.
// It is worked out once, when the request arrives (hostPolicy.view), and
// every later reader (links, the origin's forwarding headers, the
// auction, consent, the clients' shares) takes it from the exchange.
type clientView struct {
	addr    netip.Addr   // the peer's address
	trusted bool         // addr is a configured trusted proxy
	ip      netip.Addr   // the client's address (clientIP); zero when unknown
	host    string       // request_host of "URL rewriting" in docs/behaviour.md
	scheme  string       // request_scheme
	geo     *openrtb.Geo // device.geo (geoOf); nil when unknown
}

// hostPolicy holds what the guest believes of a client-facing request:
// the hosts a page may be rewritten for, the proxies whose forwarding
// headers count, and where the client is ([geo]).
type hostPolicy struct {
	domain  string
	allowed []string // domain first, then publisher.allowed_hosts; lower case
	// ports may follow an allowed name that names no port itself: the
	// domain's own port, every port an allowed host names explicitly, and
	// the port of server.listen.
	ports   map[string]bool
	trusted []netip.Prefix
	geo     geoOptions
}

// newHostPolicy builds the policy. listen is server.listen: its port, when
// fixed, is where clients that reach ssatd directly connect, so it may
// follow an allowed name too.
func newHostPolicy(domain string, allowed []string, trusted []netip.Prefix, listen string) hostPolicy {
	hp := hostPolicy{domain: strings.ToLower(domain), trusted: trusted, ports: map[string]bool{}}
	if _, port := hostport.Split(listen); validPort(port) {
		hp.ports[port] = true
	}
	hp.allowed = append(hp.allowed, hp.domain)
	for _, h := range allowed {
		hp.allowed = append(hp.allowed, strings.ToLower(h))
	}
	for _, a := range hp.allowed {
		if _, port := splitHost(a); port != "" {
			hp.ports[port] = true
		}
	}
	return hp
}

func (hp *hostPolicy) isTrusted(a netip.Addr) bool {
	for _, p := range hp.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// view works out the client's view of a request. Forwarded and
// X-Forwarded-* are only believed from trusted proxies (docs/behaviour.md,
// "Origin request"), and a host that is not the publisher's is replaced by
// the configured domain so that a forged Host can never plant foreign links
// in a page (docs/behaviour.md, "URL rewriting").
func (hp *hostPolicy) view(r *http.Request) clientView {
	v := clientView{scheme: "http"}
	if a, ok := forwarded.NodeAddr(r.RemoteAddr); ok {
		v.addr = a
	}
	v.trusted = v.addr.IsValid() && hp.isTrusted(v.addr)
	v.ip = hp.clientIP(r, v)
	v.geo = hp.geo.geoOf(r, v.trusted)
	if r.TLS != nil {
		v.scheme = "https"
	}
	host := r.Host
	if v.trusted {
		fh, fp := forwardedHostProto(r.Header)
		if fh != "" {
			host = fh
		}
		if fp == "https" || fp == "http" {
			v.scheme = fp
		}
	}
	v.host = hp.pick(host)
	return v
}

// pick returns host (lower-cased) when it is a valid host[:port] naming an
// allowed host, else the configured domain. A port is kept only where the
// configuration names it (hp.ports): a client cannot choose where links
// point. Any other text after the name ("host:@evil.example") would let a
// browser resolve the link to a foreign host.
func (hp *hostPolicy) pick(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if !validHost(host) {
		return hp.domain
	}
	name, port := splitHost(host)
	for _, a := range hp.allowed {
		aname, aport := splitHost(a)
		if aname != name {
			continue
		}
		if port == "" || port == aport || (aport == "" && hp.ports[port]) {
			return host
		}
	}
	return hp.domain
}

// splitHost splits a validated host[:port] into the bare host and the
// port, "" when absent.
func splitHost(host string) (name, port string) {
	h, port := hostport.Split(host)
	return hostport.Bare(h), port
}

// validHost reports whether s is a host as RFC 9110 §7.2 and RFC 3986
// §3.2.2 allow it in Host, restricted to what a publisher can use: a DNS
// name of letters, digits, hyphens and dots, an IPv4 address or a bracketed
// IPv6 address, then optionally ':' and a decimal port of 1 to 65535.
func validHost(s string) bool {
	if s == "" || len(s) > 261 {
		return false
	}
	name, port := hostport.Split(s)
	if len(name) < len(s) && !validPort(port) {
		return false // a ':' with no valid port after it
	}
	if strings.HasPrefix(name, "[") {
		if !strings.HasSuffix(name, "]") {
			return false
		}
		a, err := netip.ParseAddr(name[1 : len(name)-1])
		return err == nil && a.Is6() && a.Zone() == ""
	}
	return validDNSName(name)
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n >= 1 && n <= 65535
}

// validDNSName accepts LDH labels of 1 to 63 bytes (RFC 1123 §2.1), which
// also covers dotted IPv4 addresses; a trailing dot is refused.
func validDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// clientIP is the peer address, or, when the peer is a trusted proxy, the
// nearest address in its forwarding chain that is not one (walking from
// the right, RFC 7239 §5.2), so that a client cannot choose its own. A hop
// that names no address ("unknown", an obfuscated node, RFC 7239 §6.2 and
// §6.3, or a malformed value) ends the walk.
func (hp *hostPolicy) clientIP(r *http.Request, v clientView) netip.Addr {
	if !v.trusted {
		return v.addr
	}
	hops := forwardedFor(r.Header)
	ip := v.addr
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := forwarded.NodeAddr(hops[i])
		if !ok {
			break
		}
		ip = a
		if !hp.isTrusted(a) {
			break
		}
	}
	return ip
}

// forwardedFor lists the for= values of Forwarded, or else the entries of
// X-Forwarded-For, first hop first.
func forwardedFor(h http.Header) []string {
	var hops []string
	for _, e := range forwarded.Parse(h.Values("Forwarded")) {
		if v, ok := e.Get("for"); ok {
			hops = append(hops, v)
		}
	}
	if len(hops) > 0 {
		return hops
	}
	for _, f := range h.Values("X-Forwarded-For") {
		for _, e := range strings.Split(f, ",") {
			hops = append(hops, strings.TrimSpace(e))
		}
	}
	return hops
}

// forwardedHostProto reads the first hop's host and proto from Forwarded,
// falling back to X-Forwarded-Host and X-Forwarded-Proto.
func forwardedHostProto(h http.Header) (host, proto string) {
	if els := forwarded.Parse(h.Values("Forwarded")); len(els) > 0 {
		host, _ = els[0].Get("host")
		proto, _ = els[0].Get("proto")
		proto = strings.ToLower(proto)
	}
	if host == "" {
		host, _, _ = strings.Cut(h.Get("X-Forwarded-Host"), ",")
		host = strings.TrimSpace(host)
	}
	if proto == "" {
		proto, _, _ = strings.Cut(h.Get("X-Forwarded-Proto"), ",")
		proto = strings.ToLower(strings.TrimSpace(proto))
	}
	return host, proto
}
