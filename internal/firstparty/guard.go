package firstparty

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// errAddrRefused is a hop whose host resolves to an address ssatd does not
// fetch from (loopback, private, link-local, metadata and the like).
var errAddrRefused = errors.New("firstparty: address refused")

// errHostRefused is a hop whose host [proxy] allowed_domains does not permit
// (core/proxy.rs:1355-1363, 1516-1524).
var errHostRefused = errors.New("firstparty: host not in proxy.allowed_domains")

// hostAllowed is upstream's is_host_allowed (core/proxy.rs:1301-1313): an
// exact host, or "*.domain" matching the domain and any subdomain at a dot
// boundary, without case.
func hostAllowed(host, pattern string) bool {
	host, pattern = strings.ToLower(host), strings.ToLower(pattern)
	if suffix, ok := strings.CutPrefix(pattern, "*."); ok {
		return host == suffix || strings.HasSuffix(host, "."+suffix)
	}
	return host == pattern
}

// hopPermitted is redirect_is_permitted (core/proxy.rs:1287-1292): an empty
// list is open.
func (f *Family) hopPermitted(host string) bool {
	if len(f.cfg.AllowedDomains) == 0 {
		return true
	}
	for _, p := range f.cfg.AllowedDomains {
		if hostAllowed(host, p) {
			return true
		}
	}
	return false
}

// hostNamed reports whether host is listed exactly (not by a wildcard) in
// allowed_domains: the operator named it, so the address guard lets it reach
// a private address, as for 127.0.0.1 in local development (issue 33).
func (f *Family) hostNamed(host string) bool {
	for _, p := range f.cfg.AllowedDomains {
		if !strings.HasPrefix(p, "*.") && strings.EqualFold(strings.Trim(p, "[]"), host) {
			return true
		}
	}
	return false
}

// Ranges that are not the public internet, beyond what netip's predicates
// name (RFC 6890 special-purpose registries). 100.64.0.0/10 holds cloud
// metadata services too (100.100.100.200).
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001::/23"),
}

// publicAddr reports whether a is an ordinary internet address.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() ||
		a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	// NAT64 (64:ff9b::/96) embeds an IPv4 address: judge that one.
	if nat64 := netip.MustParsePrefix("64:ff9b::/96"); nat64.Contains(a) {
		b := a.As16()
		return publicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	for _, p := range refusedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func (f *Family) addrAllowed(host string, a netip.Addr) bool {
	if publicAddr(a) || f.hostNamed(host) {
		return true
	}
	for _, p := range f.cfg.AllowAddrs {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// dial resolves the hop's host itself and connects only to addresses the
// guard allows, so that a name resolving to a private address is refused at
// the moment of connecting, not at a check a second lookup could dodge.
func (f *Family) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: f.cfg.FirstByteTimeout}
	var firstErr error
	for _, ip := range ips {
		if !f.addrAllowed(host, ip) {
			firstErr = cmpErr(firstErr, fmt.Errorf("%w: %s is %s", errAddrRefused, host, ip))
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		firstErr = cmpErr(firstErr, err)
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("firstparty: %s has no address", host)
	}
	return nil, firstErr
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// newClient is the one client every fetch uses: its dialer is the guard,
// it follows no redirect itself (fetch checks each hop), uses no proxy from
// the environment, and verifies certificates unless [proxy]
// certificate_check is false (core/proxy.rs:1373).
func (f *Family) newClient() *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           f.dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   f.cfg.FirstByteTimeout,
		ResponseHeaderTimeout: f.cfg.FirstByteTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       60 * time.Second,
		TLSClientConfig: &tls.Config{
			RootCAs:            f.deps.RootCAs,
			InsecureSkipVerify: !f.cfg.CertificateCheck, //nolint:gosec // [proxy] certificate_check = false asks for it
		},
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// clientSlots bounds each client's concurrent fetches.
type clientSlots struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newClientSlots(max int) *clientSlots {
	return &clientSlots{max: max, n: make(map[string]int)}
}

func (s *clientSlots) acquire(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key] >= s.max {
		return false
	}
	s.n[key]++
	return true
}

func (s *clientSlots) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key]--; s.n[key] <= 0 {
		delete(s.n, key)
	}
}

func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}
