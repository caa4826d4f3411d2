package config

import (
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/ssatd/ssatd/internal/hostport"
)

// validateAddresses checks how the configured addresses relate to each
// other: the origin must not carry credentials and must not be ssatd's own
// listener, and the two listeners must not claim the same socket. It runs
// after validatePublisher and validateServer and skips whatever they
// already reported as malformed.
func (c *Config) validateAddresses(p *problems) {
	s, pub := &c.Server, &c.Publisher
	if pub.Origin != nil {
		if pub.Origin.User != nil {
			// ssatd never sends these to the origin, and a URL is printed
			// in logs and support tickets; refusing them is the only way
			// an operator does not believe the origin is protected by them.
			p.addf("publisher.origin_url", "must not contain credentials, got %q: ssatd does not send them to the origin; "+
				"protect the origin by network access (firewall, private network) or an origin-side check of the client address instead", maskURL(pub.OriginURL))
		}
		if l, ok := parseListen(s.Listen); ok && l.port == originPort(pub.Origin) && l.sharesHostWith(parseHost(pub.Origin.Hostname()), false) {
			p.addf("publisher.origin_url", "%q is ssatd's own server.listen address %q: every request would be proxied back to ssatd itself; "+
				"point it at the origin server", maskURL(pub.OriginURL), s.Listen)
		}
	}
	l, okL := parseListen(s.Listen)
	a, okA := parseListen(s.AdminListen)
	if okL && okA && l.port == a.port && l.sharesHostWith(a.host, true) {
		if def := Defaults().Server; s.AdminListen == def.AdminListen && s.Listen != def.Listen {
			// The operator moved server.listen onto the admin listener's
			// default: name the key that was set, not the one left alone.
			p.addf("server.listen", "%q uses the same port as server.admin_listen %q (its default) on an overlapping address: the second listener could not bind; "+
				"use another port or set server.admin_listen", s.Listen, s.AdminListen)
			return
		}
		p.addf("server.admin_listen", "%q uses the same port as server.listen %q on an overlapping address: the second listener could not bind; "+
			"use another port", s.AdminListen, s.Listen)
	}
}

// originHostKey is the origin's host[:port] as the rewriter matches it:
// lower case, with the port left out when it is the default of the scheme,
// so that "https://origin:443" and "https://origin" name the same origin.
func originHostKey(u *url.URL) string {
	h := strings.ToLower(u.Host)
	if p := u.Port(); p != "" && p == defaultPort(u.Scheme) {
		h = strings.TrimSuffix(h, ":"+p)
	}
	return h
}

func defaultPort(scheme string) string {
	if strings.EqualFold(scheme, "https") {
		return "443"
	}
	return "80"
}

func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return defaultPort(u.Scheme)
}

// hostKind sorts the host part of an address by which local sockets it can
// reach or bind.
type hostKind int

const (
	hostName        hostKind = iota // a DNS name other than localhost
	hostIP                          // an IP address that is neither loopback nor unspecified
	hostLoopback                    // 127.0.0.0/8, ::1 or "localhost"
	hostUnspecified                 // "", 0.0.0.0 or ::: every local address
)

type hostSpec struct {
	kind hostKind
	ip   netip.Addr // for hostIP and loopback IPs
	name string     // lower case, for hostName
}

func parseHost(h string) hostSpec {
	h = hostport.Fold(h)
	if h == "" {
		return hostSpec{kind: hostUnspecified}
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		// RFC 6761 §6.3: localhost names resolve to loopback.
		return hostSpec{kind: hostLoopback}
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	if err != nil {
		return hostSpec{kind: hostName, name: h}
	}
	a = a.Unmap()
	switch {
	case a.IsUnspecified():
		return hostSpec{kind: hostUnspecified}
	case a.IsLoopback():
		return hostSpec{kind: hostLoopback, ip: a}
	}
	return hostSpec{kind: hostIP, ip: a}
}

type listenSpec struct {
	host hostSpec
	port string
}

// parseListen reports ok=false for malformed values (checkListen reports
// those) and for port 0, which picks a free port and so never collides.
func parseListen(addr string) (listenSpec, bool) {
	h, port, err := net.SplitHostPort(addr)
	if err != nil || port == "0" || strings.TrimLeft(port, "0") == "" {
		return listenSpec{}, false
	}
	return listenSpec{host: parseHost(h), port: strings.TrimLeft(port, "0")}, true
}

// sharesHostWith reports whether the listener's host and other can be the
// same local socket. An unspecified listener binds every local address, so
// it meets any loopback or unspecified host; with bind set (another
// listener) it meets every host, because binding a specific address on the
// same port fails either way. localhost may resolve to any loopback
// address. Names other than localhost are not resolved: config check must
// not depend on DNS, so a name that happens to point at this host is not
// caught here.
func (l listenSpec) sharesHostWith(o hostSpec, bind bool) bool {
	a, b := l.host, o
	if a.kind == hostUnspecified || b.kind == hostUnspecified {
		other := b
		if b.kind == hostUnspecified {
			other = a
		}
		return bind || other.kind == hostUnspecified || other.kind == hostLoopback
	}
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case hostLoopback:
		return !a.ip.IsValid() || !b.ip.IsValid() || a.ip == b.ip
	case hostIP:
		return a.ip == b.ip
	}
	return a.name == b.name
}
