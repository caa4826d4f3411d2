package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/proxy"
)

// recordingOrigin answers 200 "ok" and records each request's path and
// body, in order.
type recordingOrigin struct {
	mu    sync.Mutex
	paths []string
	srv   *httptest.Server
}

func newRecordingOrigin(t *testing.T) *recordingOrigin {
	t.Helper()
	o := &recordingOrigin{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.paths = append(o.paths, r.URL.Path+" "+string(b))
		o.mu.Unlock()
		// Passed through with its length (text would be rewritten, and
		// lose it), so an HTTP/1.0 connection stays open for the next.
		w.Header().Set("Content-Type", "application/octet-stream")
		io.WriteString(w, "ok")
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *recordingOrigin) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.paths...)
}

// daemonPath is the client data path as the daemon serves it: guest,
// ClientHandler, New and Serve on a loopback listener.
func daemonPath(t *testing.T, origin string) string {
	t.Helper()
	cfg := config.Defaults()
	cfg.Publisher.Domain = "www.pub.example"
	cfg.Publisher.OriginURL = origin
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
	go func() { defer close(done); Serve(srv, l) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return l.Addr().String()
}

// exchange writes request (in pieces of at most chunk bytes, or whole
// when chunk is 0) and reads every response until the server closes the
// connection or goes quiet for a second, returning their status codes
// and whether the connection ended with a close.
func exchange(t *testing.T, addr, request string, chunk int) (statuses []int, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		for rest := request; rest != ""; {
			n := len(rest)
			if chunk > 0 {
				n = min(n, chunk)
			}
			if _, err := io.WriteString(conn, rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
	}()
	br := bufio.NewReader(conn)
	for {
		conn.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := br.Peek(1); err != nil {
			return statuses, err == io.EOF
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("unreadable response to %q: %v", request, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		if resp.Close {
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := br.ReadByte()
			if err != io.EOF {
				t.Logf("after the close: %v", err)
			}
			return statuses, err == io.EOF
		}
	}
}

const smuggled = "GET /smug HTTP/1.1\r\nHost: www.pub.example\r\n\r\n"

// TestTransferEncodingRequestsNeverReachOrigin catches the request
// smuggling of issue 18: net/http drops Transfer-Encoding from HTTP/1.0
// requests and frames them by Content-Length, so the bytes after the body
// were read as a second request and reached the origin. Every request
// that carries Transfer-Encoding, in any spelling, version or split into
// reads, must be refused and its connection closed, with nothing reaching
// the origin.
func TestTransferEncodingRequestsNeverReachOrigin(t *testing.T) {
	o := newRecordingOrigin(t)
	addr := daemonPath(t, o.srv.URL)
	const host = "Host: www.pub.example\r\n"
	tests := []struct{ name, req string }{
		{"issue 18: HTTP/1.0 keep-alive, TE chunked and Content-Length",
			"POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
		{"HTTP/1.0, lower case", "POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\ntransfer-encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
		{"HTTP/1.0, upper case, not chunked", "POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\nTRANSFER-ENCODING: identity\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
		{"HTTP/1.0, empty value", "POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\nTransfer-Encoding:\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
		{"HTTP/1.0, Content-Length first, bare LF", "POST /a HTTP/1.0\n" + "Host: www.pub.example\nConnection: keep-alive\nContent-Length: 3\nTransfer-Encoding: chunked\n\nabc" + smuggled},
		{"HTTP/1.0, value folded onto the next line", "POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
		{"HTTP/1.0, field folded into the one above", "POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\nX-Pad: a\r\n Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
		{"HTTP/1.0, whitespace before the colon", "POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
		{"HTTP/1.1, TE and Content-Length", "POST /a HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n" + smuggled},
		{"HTTP/1.0, second of two pipelined requests", "GET /first HTTP/1.0\r\n" + host + "Connection: keep-alive\r\n\r\n" +
			"POST /a HTTP/1.0\r\n" + host + "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled},
	}
	for _, tt := range tests {
		for _, chunk := range []int{0, 1, 7} {
			before := len(o.seen())
			statuses, closed := exchange(t, addr, tt.req, chunk)
			wantOrigin := 0
			if strings.HasPrefix(tt.req, "GET /first") {
				wantOrigin = 1
			}
			last := 0
			if len(statuses) > 0 {
				last = statuses[len(statuses)-1]
			}
			if len(statuses) != wantOrigin+1 || (last != http.StatusBadRequest && last != http.StatusLengthRequired) || !closed {
				t.Errorf("%s (writes of %d bytes): statuses %v, connection closed %v; want the TE request refused with 400 or 411, then a close",
					tt.name, chunk, statuses, closed)
			}
			if got := o.seen()[before:]; len(got) != wantOrigin {
				t.Errorf("%s (writes of %d bytes): the origin saw %q", tt.name, chunk, got)
			}
		}
	}
	for _, p := range o.seen() {
		if strings.HasPrefix(p, "/smug") || strings.HasPrefix(p, "/a") {
			t.Errorf("the origin saw %q", p)
		}
	}
}

// TestFramingGuardPassesOrdinaryStreams catches the guard misreading a
// connection's framing: bodies that contain header-like text, pipelined
// and keep-alive requests, HTTP/1.0 keep-alive and OPTIONS * all reach
// the origin (or Go's answer) whole and in order.
func TestFramingGuardPassesOrdinaryStreams(t *testing.T) {
	o := newRecordingOrigin(t)
	addr := daemonPath(t, o.srv.URL)
	const host = "Host: www.pub.example\r\n"
	body := "x\r\nTransfer-Encoding: chunked\r\n\r\nGET /inbody HTTP/1.1\r\n\r\n"
	stream := "POST /form HTTP/1.1\r\n" + host + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body +
		"OPTIONS * HTTP/1.1\r\n" + host + "Content-Length: 2\r\n\r\nzz" +
		"GET /two HTTP/1.1\r\n" + host + "content-length: 000\r\n\r\n" +
		"POST /three HTTP/1.1\r\n" + host + "Content-Length: 5\r\nContent-Length:  5 \r\n\r\nabcde" +
		"GET /four HTTP/1.0\r\n" + host + "\r\n"
	for _, chunk := range []int{0, 1, 13} {
		before := len(o.seen())
		statuses, closed := exchange(t, addr, stream, chunk)
		if want := []int{200, 200, 200, 200, 200}; !slices.Equal(statuses, want) || !closed {
			t.Errorf("writes of %d bytes: statuses %v (closed %v), want %v and the HTTP/1.0 close", chunk, statuses, closed, want)
		}
		got := o.seen()[before:]
		want := []string{"/form " + body, "/two ", "/three abcde", "/four "}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("writes of %d bytes: the origin saw %q, want %q", chunk, got, want)
		}
	}
}
