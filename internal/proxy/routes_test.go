package proxy

import (
	"bufio"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// TestRouteTableSendsTheRestToTheOrigin reads the client side's route
// table (routes.go) from outside, over HTTP/1.1: each tsjs route answers
// its methods itself, and everything else reaches the origin, other
// methods on those paths included, with the request line the client sent.
// The table routes on the decoded path, as the guest matched before chi
// ("/auct%69on" is /auction), and a method chi does not know still reaches
// a route that takes every method.
func TestRouteTableSendsTheRestToTheOrigin(t *testing.T) {
	verifyNoLeaks(t)
	origin := newLineOrigin(t)
	_, addr := newH2Front(t, origin)
	bundle := rewrite.BundlePath
	for _, tc := range []struct {
		method, target string
		status         string // "200" from the origin when it is reached
		toOrigin       bool
	}{
		{"POST", "/auction", "415", false},
		{"GET", "/auction", "405", false},
		{"PROPFIND", "/auction", "405", false},
		{"GET", "/auct%69on", "405", false},
		{"POST", "/auction/", "200", true},
		{"GET", "/_ts/page-bids", "403", false},
		{"OPTIONS", "/__ts/page-bids", "403", false},
		{"POST", "/_ts/page-bids", "200", true},
		{"DELETE", "/__ts/page-bids?path=/", "200", true},
		{"PROPFIND", "/_ts/page-bids", "200", true},
		{"GET", bundle, "200", false},
		{"HEAD", bundle, "200", false},
		{"PUT", bundle, "200", true},
		{"GET", rewrite.StaticPrefix + "tsjs-unified.js", "200", false},
		{"GET", rewrite.StaticPrefix + "tsjs-prebid.min.js?v=1", "404", false},
		{"HEAD", rewrite.StaticPrefix + "app.css", "404", false},
		{"POST", rewrite.StaticPrefix + "app.css", "200", true},
		{"GET", "/news/a%2Fb?x=1", "200", true},
		{"PROPFIND", "/dav/", "200", true},
		// Without publisher.proxy_secret there is no first-party family.
		{"GET", "/first-party/proxy", "200", true},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			checkRoute(t, origin, addr, tc.method, tc.target, tc.status, tc.toOrigin)
		})
	}
}

// checkRoute sends method and target to addr and checks the status and
// whether the origin got the request, as it was sent.
func checkRoute(t *testing.T, origin *lineOrigin, addr, method, target, status string, toOrigin bool) {
	t.Helper()
	if got := h1MethodStatus(t, addr, method, target); got != status {
		t.Errorf("answered %s, want %s", got, status)
	}
	lines := origin.take()
	switch want := method + " " + target + " HTTP/1.1"; {
	case toOrigin && (len(lines) != 1 || lines[0] != want):
		t.Errorf("the origin got %q, want %q", lines, want)
	case !toOrigin && len(lines) != 0:
		t.Errorf("the origin got %q, want nothing", lines)
	}
}

// TestFirstPartyRoutesAnswerUpstreamsMethodsOnly: with
// publisher.proxy_secret the four /first-party/* routes answer the
// methods upstream routes (GET proxy and click, GET and POST sign and
// proxy-rebuild), here refusing requests without their parameters, and
// every other method and path below /first-party/ reaches the origin, as
// upstream's router sends them to its publisher fallback.
func TestFirstPartyRoutesAnswerUpstreamsMethodsOnly(t *testing.T) {
	verifyNoLeaks(t)
	origin := newLineOrigin(t)
	_, addr := newH2Front(t, origin, func(c *config.Config) {
		c.FirstParty = config.FirstPartyConfig{ProxySecret: "route-table-test-secret", RewriteCreatives: true}
	})
	for _, tc := range []struct {
		method, target string
		status         string
		toOrigin       bool
	}{
		{"GET", "/first-party/proxy", "400", false},
		{"GET", "/first-party/click", "400", false},
		{"GET", "/first-party/sign", "400", false},
		{"POST", "/first-party/sign", "400", false},
		{"GET", "/first-party/proxy-rebuild", "400", false},
		{"POST", "/first-party/proxy-rebuild", "400", false},
		{"GET", "/first-party/pr%6Fxy", "400", false},
		{"HEAD", "/first-party/proxy", "200", true},
		{"PUT", "/first-party/proxy", "200", true},
		{"POST", "/first-party/click", "200", true},
		{"DELETE", "/first-party/sign", "200", true},
		{"PROPFIND", "/first-party/proxy-rebuild", "200", true},
		{"GET", "/first-party/other", "200", true},
		{"GET", "/first-party/proxy/", "200", true},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			checkRoute(t, origin, addr, tc.method, tc.target, tc.status, tc.toOrigin)
		})
	}
}

// h1MethodStatus sends one request with the given method and
// request-target, as they are, over a new HTTP/1.1 TLS connection to addr,
// and returns the status code.
func h1MethodStatus(t *testing.T, addr, method, target string) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := method + " " + target + " HTTP/1.1\r\nHost: " + testDomain + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the response to %s %q: %v", method, target, err)
	}
	if f := strings.Fields(line); len(f) > 1 {
		return f[1]
	}
	return line
}
