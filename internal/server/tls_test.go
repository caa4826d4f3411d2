package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"golang.org/x/net/http2"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/devcert"
	"github.com/ssatd/ssatd/internal/proxy"
)

// tlsFront is the client data path served over TLS by ServeTLS, with a
// certificate from a fresh local CA.
type tlsFront struct {
	addr   string // 127.0.0.1:port
	caFile string
	roots  *x509.CertPool
}

func newTLSFront(t *testing.T, origin string, mutate ...func(*config.Config)) *tlsFront {
	t.Helper()
	f, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(f.CACert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)

	cfg := config.Defaults()
	cfg.Publisher.Domain = "www.pub.example"
	cfg.Publisher.OriginURL = origin
	for _, m := range mutate {
		m(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: zap.NewNop(), Bundle: []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	h, err := ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(cfg, h, nil)
	done := make(chan struct{})
	go func() { defer close(done); ServeTLS(srv, l, &cert) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return &tlsFront{addr: l.Addr().String(), caFile: f.CACert, roots: roots}
}

// h2Client speaks HTTP/2 only (x/net/http2's transport, so that stream
// errors keep their type).
func (f *tlsFront) h2Client(t *testing.T) *http.Client {
	tr := &http2.Transport{TLSClientConfig: &tls.Config{RootCAs: f.roots}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

func (f *tlsFront) url(path string) string { return "https://" + f.addr + path }

// checkLeaks registers, first so that it runs last, a check that no
// goroutine outlives the test.
func checkLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// TestHTTP2StreamsPagesAsTheyArrive: over HTTP/2 the rewritten page's
// first bytes reach the client while the origin still holds the rest
// (the origin sends its second half only once the client has the first).
func TestHTTP2StreamsPagesAsTheyArrive(t *testing.T) {
	checkLeaks(t)
	next := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// Past the first 1,024 bytes, where a page may still declare
		// its charset (and the rewriter may wait to see it).
		io.WriteString(w, `<html><head></head><body><p>`+strings.Repeat("text ", 400)+`</p><p>first half</p>`)
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `<p>second half</p></body></html>`)
	}))
	defer origin.Close()
	front := newTLSFront(t, origin.URL)
	resp, err := front.h2Client(t).Get(front.url("/page"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %d, want HTTP/2 200", resp.Proto, resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	got := make(chan error, 1)
	go func() {
		for {
			line, err := br.ReadString('>')
			if err != nil {
				got <- err
				return
			}
			if strings.Contains(line, "first half") {
				got <- nil
				return
			}
		}
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the first half never came: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(next)
		t.Fatal("the first half did not reach the client before the origin sent the rest")
	}
	close(next)
	rest, err := io.ReadAll(br)
	if err != nil || !strings.Contains(string(rest), "second half</p></body></html>") {
		t.Fatalf("rest of the page %q, %v", rest, err)
	}
}

// TestAbortedPageResetsHTTP2Stream: a page cut off by its origin must end
// with RST_STREAM over HTTP/2 (here INTERNAL_ERROR, from the handler's
// http.ErrAbortHandler), never with the END_STREAM of a complete body.
func TestAbortedPageResetsHTTP2Stream(t *testing.T) {
	checkLeaks(t)
	origin, cut := truncatingOrigin(t)
	front := newTLSFront(t, origin.URL)
	resp, err := front.h2Client(t).Get(front.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cut()
	n, err := io.Copy(io.Discard, resp.Body)
	var se http2.StreamError
	if !errors.As(err, &se) || se.Code != http2.ErrCodeInternal {
		t.Fatalf("the truncated page ended with %v after %d bytes, want RST_STREAM INTERNAL_ERROR", err, n)
	}
	if n == 0 || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %d bytes: the abort was meant to come after the first bytes", resp.StatusCode, n)
	}
}

// TestFailureBeforeFirstByteIs502OverHTTP2: an origin that cannot be
// reached is a 502 over HTTP/2 as over HTTP/1.1.
func TestFailureBeforeFirstByteIs502OverHTTP2(t *testing.T) {
	checkLeaks(t)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	front := newTLSFront(t, deadURL)
	resp, err := front.h2Client(t).Get(front.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.ProtoMajor != 2 || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("%s %d %q, %v; want HTTP/2 502", resp.Proto, resp.StatusCode, body, err)
	}
}

// TestHTTP1OverTLSIsGuarded: a client that does not offer h2 is served
// HTTP/1.1 over TLS, with the framing guard: issue 18's smuggling request
// is refused there too, and an h2 preface sent as HTTP/1.1 gets 505.
func TestHTTP1OverTLSIsGuarded(t *testing.T) {
	checkLeaks(t)
	o := newRecordingOrigin(t)
	front := newTLSFront(t, o.srv.URL)
	for _, tt := range []struct {
		req    string
		status int
	}{
		{"POST /a HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled, http.StatusLengthRequired},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", http.StatusHTTPVersionNotSupported},
		{"GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", http.StatusOK},
	} {
		conn, err := tls.Dial("tcp", front.addr, &tls.Config{RootCAs: front.roots, ServerName: "localhost", NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, tt.req)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		_, err = br.ReadByte()
		conn.Close()
		if resp.StatusCode != tt.status || err != io.EOF {
			t.Errorf("%q: status %d, then %v; want %d and the connection's end", tt.req, resp.StatusCode, err, tt.status)
		}
	}
	if got := o.seen(); len(got) != 1 || got[0] != "/ok " {
		t.Errorf("the origin saw %q, want only /ok", got)
	}
}

// TestCurlHTTP2 runs curl --http2 (libcurl with nghttp2): a page arrives
// over HTTP/2, and a truncated one makes curl report the stream as not
// closed cleanly (exit 92, CURLE_HTTP2_STREAM) instead of success.
func TestCurlHTTP2(t *testing.T) {
	checkLeaks(t)
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("this test runs curl, which is not on PATH")
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head></head><body>whole</body></html>")
	}))
	defer page.Close()
	// run runs curl against front; with firstByte, curl writes the body
	// unbuffered (-N) into a pipe, and firstByte is called once its first
	// byte came out: the page has then reached curl.
	run := func(front *tlsFront, firstByte func()) (string, string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out := "/dev/null"
		var body *os.File
		var extra []*os.File
		if firstByte != nil {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			body, extra, out = r, []*os.File{w}, "/dev/fd/3"
		}
		cmd := exec.CommandContext(ctx, curl, "--http2", "-sSN", "--cacert", front.caFile,
			"-o", out, "-w", "%{http_version} %{http_code}", front.url("/"))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = &stdout, &stderr, extra
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if body != nil {
			extra[0].Close() // curl holds the write end now
			// A curl that ends or is killed (ctx) first closes the pipe.
			if n, _ := body.Read(make([]byte, 1)); n == 1 {
				firstByte()
			}
			_, _ = io.Copy(io.Discard, body)
		}
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	out, errOut, code := run(newTLSFront(t, page.URL), nil)
	if out != "2 200" || code != 0 {
		t.Errorf("whole page: curl printed %q (stderr %q), exit %d; want HTTP/2 200, exit 0", out, errOut, code)
	}
	origin, cut := truncatingOrigin(t)
	_, errOut, code = run(newTLSFront(t, origin.URL), cut)
	if code != 92 || !strings.Contains(errOut, "INTERNAL_ERROR") {
		t.Errorf("truncated page: curl exit %d, stderr %q; want 92 and INTERNAL_ERROR", code, errOut)
	}
}

// TestRedirectToHTTPS: the plain listener answers 308 to the https URL on
// the TLS listener's port with the path and query, keeps a forged host
// out of Location, and refuses HTTP/2 with prior knowledge (505).
func TestRedirectToHTTPS(t *testing.T) {
	checkLeaks(t)
	srv := httptest.NewServer(RedirectToHTTPS("8443", func() string { return "www.pub.example:8080" }))
	defer srv.Close()
	for _, tt := range []struct {
		method, host, path, want string
	}{
		{"GET", "localhost:8080", "/a/b?x=1&y=2", "https://localhost:8443/a/b?x=1&y=2"},
		{"POST", "www.pub.example", "/form", "https://www.pub.example:8443/form"},
		{"GET", "127.0.0.1:8080", "/", "https://127.0.0.1:8443/"},
		{"GET", "[::1]:8080", "/", "https://[::1]:8443/"},
		{"GET", "[::1]", "/", "https://[::1]:8443/"},
		{"GET", "evil.example@x", "/", "https://www.pub.example:8443/"},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		req.Host = tt.host
		resp, err := srv.Client().Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != tt.want {
			t.Errorf("%s %s%s: %d Location %q, want 308 %q", tt.method, tt.host, tt.path, resp.StatusCode, resp.Header.Get("Location"), tt.want)
		}
	}
	status, closed := rawExchange(t, strings.TrimPrefix(srv.URL, "http://"), "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	if status != http.StatusHTTPVersionNotSupported || !closed {
		t.Errorf("h2 preface on the redirect listener: %d (closed %v), want 505 and a close", status, closed)
	}
	std := httptest.NewServer(RedirectToHTTPS("443", func() string { return "www.pub.example" }))
	defer std.Close()
	for host, want := range map[string]string{"www.pub.example:8080": "https://www.pub.example/x", "[::1]:80": "https://[::1]/x"} {
		req, _ := http.NewRequest(http.MethodGet, std.URL+"/x", nil)
		req.Host = host
		resp, err := std.Client().Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); got != want {
			t.Errorf("port 443, host %s: Location %q, want %q (443 left out)", host, got, want)
		}
	}
}

// TestRedirectHostWithStrayBracketFallsBack: a Host with a bracket that
// encloses no IPv6 address ("evil.example]", which Go's server accepts) is
// no plain host, and Location names the fallback host. The redirect
// trimmed every bracket off the ends and sent the client to
// https://evil.example/; it now splits the Host as the proxy does
// (hostport.Name), which takes off only a whole pair.
func TestRedirectHostWithStrayBracketFallsBack(t *testing.T) {
	checkLeaks(t)
	srv := httptest.NewServer(RedirectToHTTPS("443", func() string { return "www.pub.example" }))
	defer srv.Close()
	for _, host := range []string{"evil.example]", "[evil.example", "[[evil.example]]:80"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/x", nil)
		req.Host = host
		resp, err := srv.Client().Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := resp.Header.Get("Location"), "https://www.pub.example/x"; got != want {
			t.Errorf("host %q: Location %q, want %q", host, got, want)
		}
	}
}

// TestRedirectPort: the configured port wins over the HTTPS listener's
// own, which behind a port mapping is not the one clients use; 0 keeps
// the listener's.
func TestRedirectPort(t *testing.T) {
	listener := &net.TCPAddr{IP: net.IPv4zero, Port: 443}
	for _, tt := range []struct {
		configured int
		want       string
	}{{0, "443"}, {8443, "8443"}, {443, "443"}} {
		if got := RedirectPort(tt.configured, listener); got != tt.want {
			t.Errorf("RedirectPort(%d, %v) = %q, want %q", tt.configured, listener, got, tt.want)
		}
	}
}
