package proxy

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientView is what the guest believes about the client-facing side of a
// request: who sent it, and which host and scheme links must point at.
type clientView struct {
	addr    netip.Addr
	trusted bool   // addr is a configured trusted proxy
	host    string // request_host of spec §4.1
	scheme  string // request_scheme
}

// hostPolicy holds the client-facing hosts a page may be rewritten for.
type hostPolicy struct {
	domain  string
	allowed []string // domain first, then publisher.allowed_hosts; lower case
	trusted []netip.Prefix
}

func (hp *hostPolicy) isTrusted(a netip.Addr) bool {
	for _, p := range hp.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// view works out the client-facing host and scheme. Forwarded and
// X-Forwarded-* are only believed from trusted proxies (spec §2), and a host
// that is not the publisher's is replaced by the configured domain so that a
// forged Host can never plant foreign links in a page (spec §4.1).
func (hp *hostPolicy) view(r *http.Request) clientView {
	v := clientView{scheme: "http"}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		v.addr = ap.Addr().Unmap()
	} else if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		v.addr = a.Unmap()
	}
	v.trusted = v.addr.IsValid() && hp.isTrusted(v.addr)
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

// pick returns host (lower-cased) when it names an allowed host, else the
// configured domain. An allowed entry without a port matches the host on any
// port, and the client's port is kept so that links work where it connected.
func (hp *hostPolicy) pick(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if host == "" || strings.ContainsAny(host, "/\\@ \t\"'<>") {
		return hp.domain
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	for _, a := range hp.allowed {
		if a == host || a == name {
			return host
		}
	}
	return hp.domain
}

// forwardedHostProto reads the first hop's host and proto from Forwarded
// (RFC 7239), falling back to X-Forwarded-Host and X-Forwarded-Proto.
func forwardedHostProto(h http.Header) (host, proto string) {
	if f := h.Get("Forwarded"); f != "" {
		first, _, _ := strings.Cut(f, ",")
		for _, pair := range strings.Split(first, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok {
				continue
			}
			val = strings.Trim(val, `"`)
			switch strings.ToLower(k) {
			case "host":
				host = val
			case "proto":
				proto = strings.ToLower(val)
			}
		}
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
