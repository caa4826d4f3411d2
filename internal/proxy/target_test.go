package proxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/server"
)

// lineOrigin is an origin on a raw TCP listener that records the request
// line of every request it gets, as it got it, and answers 200.
type lineOrigin struct {
	l     net.Listener
	mu    sync.Mutex
	lines []string
	wg    sync.WaitGroup
}

func newLineOrigin(t *testing.T) *lineOrigin {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &lineOrigin{l: l}
	o.wg.Add(1)
	go o.serve()
	t.Cleanup(func() { l.Close(); o.wg.Wait() })
	return o
}

// newH2Front is the client side, with its protections, in front of a
// guest whose origin is o, over TLS with HTTP/2 offered: the guest and the
// listener's address. mutate changes the configuration first.
func newH2Front(t *testing.T, o *lineOrigin, mutate ...func(*config.Config)) (*Guest, string) {
	t.Helper()
	cfg := testConfig(t, "http://"+o.l.Addr().String(), mutate...)
	g, err := New(cfg, Options{Logger: zap.NewNop(), Bundle: []byte("bundle")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	h, err := server.ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewUnstartedServer(h)
	front.EnableHTTP2 = true
	front.StartTLS()
	t.Cleanup(front.Close)
	return g, front.Listener.Addr().String()
}

func (o *lineOrigin) serve() {
	defer o.wg.Done()
	for {
		c, err := o.l.Accept()
		if err != nil {
			return
		}
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			o.mu.Lock()
			o.lines = append(o.lines, strings.TrimRight(line, "\r\n"))
			o.mu.Unlock()
			for { // the rest of the head
				if l, err := br.ReadString('\n'); err != nil || l == "\r\n" {
					break
				}
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
		}()
	}
}

func (o *lineOrigin) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.lines
	o.lines = nil
	return l
}

// h2Status sends one GET with the given :path, as it is, over a new HTTP/2
// connection to addr, and returns the response's :status, or "reset" when
// the server reset the stream or the connection instead.
func h2Status(t *testing.T, addr, path string) string {
	t.Helper()
	return h2MethodStatus(t, addr, "GET", path)
}

// h2MethodStatus is h2Status with the :method given.
func h2MethodStatus(t *testing.T, addr, method, path string) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN chose %q", p)
	}
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", method}, {":scheme", "https"}, {":authority", testDomain}, {":path", path}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the response to %q: %v", path, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == 1 {
				return f.PseudoValue("status")
			}
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			return "reset"
		}
	}
}

// An HTTP/2 :path with a space ("/a?x=1 HTTP/1.1") went into the origin's
// request line as it was: "GET /a?x=1 HTTP/1.1 HTTP/1.1". A request-target
// with whitespace or a control byte is answered 400 before the origin is
// asked (RFC 9112 §3.2, RFC 9113 §8.3.1); bytes above 0x7f reach the
// origin percent-encoded. Over real HTTP/2 and TLS, the origin a raw
// listener that records the request line it got.
func TestHTTP2PathWithSpaceNeverReachesOriginRequestLine(t *testing.T) {
	verifyNoLeaks(t)
	origin := newLineOrigin(t)
	_, addr := newH2Front(t, origin)
	for _, tc := range []struct {
		name, path, status, line string // line "": the origin is not asked
	}{
		{"plain", "/a?x=1", "200", "GET /a?x=1 HTTP/1.1"},
		{"space in the query", "/a?x=1 HTTP/1.1", "400", ""},
		{"space in the path", "/a b", "400", ""},
		{"space alone", "/a?x= ", "400", ""},
		{"utf-8 in the query", "/a?q=caf\xc3\xa9", "200", "GET /a?q=caf%C3%A9 HTTP/1.1"},
		{"utf-8 in the path, a lone byte in the query", "/caf\xc3\xa9?q=\xff", "200", "GET /caf%C3%A9?q=%FF HTTP/1.1"},
		// Go's HTTP/2 server resets these streams itself (an invalid
		// field value, an invalid URL): not answered, never forwarded.
		{"tab", "/a?x=\t1", "reset", ""},
		{"DEL", "/a?x=\x7f", "reset", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := h2Status(t, addr, tc.path); got != tc.status {
				t.Errorf(":path %q answered %s, want %s", tc.path, got, tc.status)
			}
			var want []string
			if tc.line != "" {
				want = []string{tc.line}
			}
			if got := origin.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf(":path %q: the origin got request lines %q, want %q", tc.path, got, want)
			}
		})
	}
}

func TestBadRequestTarget(t *testing.T) {
	for _, tc := range []struct {
		target string
		bad    bool
	}{
		{"/a?x=1", false}, {"*", false}, {"www.pub.example:443", false},
		{"/caf\xc3\xa9", false}, {"/%20", false},
		{"/a b", true}, {"/a\t", true}, {"/a\x00", true}, {"/a\r\n", true}, {"/\x7f", true}, {" ", true},
	} {
		if got := badRequestTarget(tc.target); got != tc.bad {
			t.Errorf("badRequestTarget(%q) = %v, want %v", tc.target, got, tc.bad)
		}
	}
}

func TestEscapeTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		path bool
		want string
	}{
		{"", false, ""},
		{"a=1&b=%C3%A9", false, "a=1&b=%C3%A9"},
		{"q=caf\xc3\xa9", false, "q=caf%C3%A9"},
		{"\xff\x80", false, "%FF%80"},
		{"x=\"<>`{}|\\^", false, "x=\"<>`{}|\\^"},
		{"a=\xe2\x82\xac5", false, "a=%E2%82%AC5"},
		{"a=1#b", false, "a=1%23b"},
		{"a=1;b=%zz", false, "a=1;b=%zz"},
		{"/a%2Fb/!$&'()*+,;=:@[]~", true, "/a%2Fb/!$&'()*+,;=:@[]~"},
		{"/x\"<>`{}|\\^#\xc3\xa9", true, "/x%22%3C%3E%60%7B%7D%7C%5C%5E%23%C3%A9"},
	} {
		if got := escapeTarget(tc.in, tc.path); got != tc.want {
			t.Errorf("escapeTarget(%q, %v) = %q, want %q", tc.in, tc.path, got, tc.want)
		}
	}
}

// h1Status sends one GET with the given request-target, as it is, over a
// new HTTP/1.1 TLS connection to addr, and returns the status code.
func h1Status(t *testing.T, addr, target string) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: " + testDomain + "\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the response to %q: %v", target, err)
	}
	if f := strings.Fields(line); len(f) > 1 {
		return f[1]
	}
	return line
}

// The origin got another request-target than the client sent: ReverseProxy
// re-encodes a query holding a ';' or a '%' without two hex digits through
// url.ParseQuery, which drops what it cannot parse ("/q?a=1;b=2" and
// "/q?pct=100%" reached the origin as "/q"), and Go wrote a path with a
// '|', '^' or a byte above 0x7f by decoding and encoding it again, so the
// client's "%2F" became a '/' ("/a%2Fb/x|y" reached it as "/a/b/x%7Cy").
// The target reaches the origin as the client sent it, but for the bytes a
// request-target cannot hold, percent-encoded. Over HTTP/1.1 and HTTP/2,
// the origin a raw listener that records the request line it got.
func TestClientTargetReachesOriginAsSent(t *testing.T) {
	verifyNoLeaks(t)
	origin := newLineOrigin(t)
	_, addr := newH2Front(t, origin)
	for _, tc := range []struct {
		name, target, sent string // sent "": the origin gets target as it is
	}{
		{"plain", "/a?x=1", ""},
		{"a semicolon in the query", "/q?a=1;b=2", ""},
		{"a lone percent sign in the query", "/q?pct=100%", ""},
		{"a percent sign without hex digits", "/q?x=%zz&y=1", ""},
		{"order, plus signs and escapes", "/q?b=2&a=1+2&c=%2F%2b", ""},
		{"an escaped slash", "/a%2Fb/c", ""},
		{"an escaped slash beside a pipe", "/a%2Fb/x|y", "/a%2Fb/x%7Cy"},
		{"escapes beside a caret", "/a%41b/%7e^", "/a%41b/%7e%5E"},
		{"a number sign in the query", "/q?x=1#y", "/q?x=1%23y"},
		{"sub-delimiters", "/~u/!$&'()*+,;=:@[x]?k=/?:@!$'()*,;", ""},
	} {
		want := tc.sent
		if want == "" {
			want = tc.target
		}
		for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				status := ""
				if proto == "HTTP/2" {
					status = h2Status(t, addr, tc.target)
				} else {
					status = h1Status(t, addr, tc.target)
				}
				if status != "200" {
					t.Errorf("%q answered %s, want 200", tc.target, status)
				}
				line := "GET " + want + " HTTP/1.1"
				if got := origin.take(); len(got) != 1 || got[0] != line {
					t.Errorf("%q: the origin got request lines %q, want %q", tc.target, got, line)
				}
			})
		}
	}
}

// TestHTTP2MethodNotATokenIsNotA5xx: Go's HTTP/2 server lets a :method
// that is not a token through (its HTTP/1 server answers 400 itself), and
// the origin transport refused to send it, so "G\xffT" was a 502
// (origin_unreachable) for the client's own malformed request. It is a
// 400 (bad_method) before the origin is asked; a long token method still
// reaches the origin.
func TestHTTP2MethodNotATokenIsNotA5xx(t *testing.T) {
	verifyNoLeaks(t)
	origin := newLineOrigin(t)
	g, addr := newH2Front(t, origin)
	long := strings.Repeat("M", 2000)
	for _, tc := range []struct{ name, method, status, line string }{
		{"byte above 0x7f", "G\xffT", "400", ""},
		{"space", "GE T", "400", ""},
		{"slash", "GET/", "400", ""},
		{"long token", long, "200", long + " /a HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := h2MethodStatus(t, addr, tc.method, "/a"); got != tc.status {
				t.Errorf(":method %.20q answered %s, want %s", tc.method, got, tc.status)
			}
			var want []string
			if tc.line != "" {
				want = []string{tc.line}
			}
			if got := origin.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf(":method %.20q: the origin got request lines %.60q, want %.60q", tc.method, got, want)
			}
		})
	}
	if n := g.Metrics().Sum("ssatd_requests_total", map[string]string{"status_class": "5xx"}); n != 0 {
		t.Errorf("client input caused %v 5xx", n)
	}
}
