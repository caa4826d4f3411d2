package server

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/ssatd/ssatd/internal/hostport"
)

// RedirectPort is the port a redirect to HTTPS names: configured
// (server.tls_redirect_port), the port clients reach the HTTPS listener
// on, which behind a port mapping (docker -p 8443:443) is not the one it
// listens on; else, with 0, the port of tlsAddr, the HTTPS listener's own.
func RedirectPort(configured int, tlsAddr net.Addr) string {
	if configured != 0 {
		return strconv.Itoa(configured)
	}
	_, port, _ := net.SplitHostPort(tlsAddr.String())
	return port
}

// RedirectToHTTPS answers every request on a plain listener with 308
// Permanent Redirect to the same path and query on https at port (left
// out when it is 443), as a Compute service does on port 80: "Fastly
// automatically returns a 308 Permanent Redirect response status with the
// Location header indicating the HTTPS version of the same URL"
// (https://docs.fastly.com/products/compute-resource-limits, "Port
// limits"); a VCL service's "Force TLS" sends 301
// (https://www.fastly.com/documentation/guides/full-site-delivery/domains-and-origins/forcing-an-https-redirect),
// and 308 also keeps a POST a POST with its body (RFC 9110 §15.4.9). The
// host is the request's, when it is a plain host name or IP address,
// else the host of fallback(), asked per request so that it follows a
// reload of publisher.domain: a forged Host cannot put anything else
// into Location.
// Nothing reaches the guest or the origin. HTTP/2 with prior knowledge is
// refused as on the client listener.
func RedirectToHTTPS(port string, fallback func() string) http.Handler {
	return RefuseH2Preface(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostport.Name(r.Host)
		if !plainHost(host) {
			host = hostport.Name(fallback())
		}
		switch {
		case port != "443":
			host = net.JoinHostPort(host, port)
		case strings.Contains(host, ":"):
			host = "[" + host + "]" // IPv6
		}
		target := "https://" + host + r.URL.RequestURI()
		w.Header().Set("Location", target)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusPermanentRedirect)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte("308 Permanent Redirect: " + target + "\n"))
		}
	}))
}

// plainHost accepts a DNS name or an IP address, nothing that could end
// the authority of a URL or start its path.
func plainHost(h string) bool {
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
