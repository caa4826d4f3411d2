package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestDaemonRefusesHTTP10TransferEncoding replays issue 18's smuggling
// request against the daemon as serve runs it: before the fix the
// HTTP/1.0 request was framed by its Content-Length, answered with the
// connection kept alive, and "GET /smug" reached the origin.
func TestDaemonRefusesHTTP10TransferEncoding(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
	}))
	defer o.Close()
	origin := o.URL
	d := startDaemonWith(t, `
[server]
drain_period = "0s"

[publisher]
domain = "localhost"
origin_url = "`+origin+`"
`, zap.NewNop())
	conn, err := net.Dial("tcp", d.clientAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "POST /a HTTP/1.0\r\nHost: localhost:8080\r\nConnection: keep-alive\r\n"+
		"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabcGET /smug HTTP/1.1\r\nHost: localhost:8080\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusLengthRequired || resp.Header.Get("Connection") != "close" {
		t.Errorf("status %d, Connection %q; want 411 and close", resp.StatusCode, resp.Header.Get("Connection"))
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the refusal the connection gave %v, want its end", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("the origin saw %q", seen)
	}
}
