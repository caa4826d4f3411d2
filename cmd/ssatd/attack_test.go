package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/devcert"
)

// attackAsset is the 106-byte asset of issue 30's HTTP/2 attack.
var attackAsset = strings.Repeat("a", 105) + "\n"

// attackPage is larger than what the guest copies to the client at once,
// so that a page whose client opens no window keeps its page place.
var attackPage = "<!doctype html><html><head><title>p</title></head><body>" +
	strings.Repeat("<p>a paragraph of the page</p>\n", 8<<10) + "</body></html>"

// attackOrigin serves /page (a page to rewrite), /asset.wasm (passed
// through) and /ws, which answers 101 Switching Protocols whatever the
// request asked and holds the connection as an idle WebSocket does.
func attackOrigin(t *testing.T) *httptest.Server {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, attackPage)
		case "/ws":
			c, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			_ = brw.Flush()
			_, _ = io.Copy(io.Discard, c) // idle until the other end closes
		default:
			w.Header().Set("Content-Type", "application/wasm")
			_, _ = io.WriteString(w, attackAsset)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// startTLSDaemon runs serve's daemon over TLS with a dev certificate, so
// that clients negotiate HTTP/2, with conf added to [server]. It returns
// the client listener's address and the roots that trust it.
func startTLSDaemon(t *testing.T, originURL, conf string) (string, *x509.CertPool) {
	t.Helper()
	pair, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(writeConfig(t, fmt.Sprintf(`
[server]
drain_period = "0s"
shutdown_timeout = "5s"
tls_cert_file = %q
tls_key_file = %q
%s

[publisher]
domain = "localhost"
origin_url = %q
`, pair.Cert, pair.Key, conf, originURL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDaemon(cfg, zap.NewNop()) // thousands of access lines
	if err != nil {
		t.Fatal(err)
	}
	var ls listeners
	for _, l := range []*net.Listener{&ls.client, &ls.admin} {
		if *l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.run(ctx, &ls) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	caPEM, err := os.ReadFile(pair.CACert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return ls.client.Addr().String(), roots
}

// attackDial connects to the daemon over TLS from the loopback address
// local (a client of its own for the per-client share), offering proto.
func attackDial(addr, local, proto string, roots *x509.CertPool) (*tls.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: roots, ServerName: "localhost", NextProtos: []string{proto}})
}

// h2Attack is a raw HTTP/2 client (x/net/http2's Framer) that sets
// SETTINGS_INITIAL_WINDOW_SIZE = 0 and never opens a window, so no
// response body it asks for can be sent. Each of its connections opens
// streams for path at once; a stream the server resets after its
// response began is opened again, and a connection that ends is dialled
// again, so that the attack keeps what it can hold.
type h2Attack struct {
	addr, local, path string
	roots             *x509.CertPool
	streams           int
	stop              <-chan struct{}
}

// attackLimits bound one attacking connection's work.
const (
	attackRedials = 20
	attackReopens = 2000
)

// run keeps one attacking connection open until stop: answered is
// called once the first batch of streams has each had its response
// headers or a reset, reset once the server has reset a stream whose
// response had begun (the client held it).
func (a *h2Attack) run(answered, reset func()) {
	for range attackRedials {
		c, err := attackDial(a.addr, a.local, "h2", a.roots)
		if err != nil {
			return
		}
		ended := make(chan struct{})
		go func() {
			select {
			case <-a.stop:
			case <-ended:
			}
			c.Close()
		}()
		a.hold(c, answered, reset)
		close(ended)
		select {
		case <-a.stop:
			return
		default:
		}
	}
}

// hold opens the streams on c and reads until c ends.
func (a *h2Attack) hold(c *tls.Conn, answered, reset func()) {
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return
	}
	if fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}) != nil {
		return
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	next := uint32(1)
	open := func(n int) error {
		var out bytes.Buffer
		fw := http2.NewFramer(&out, nil)
		for range n {
			block.Reset()
			for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost"},
				{":path", a.path}, {"accept", "text/html"}, {"sec-fetch-dest", "document"}} {
				_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
			_ = fw.WriteHeaders(http2.HeadersFrameParam{StreamID: next, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
			next += 2
		}
		_, err := c.Write(out.Bytes())
		return err
	}
	if open(a.streams) != nil {
		return
	}
	first, began, seen, reopened := a.streams, map[uint32]bool{}, map[uint32]bool{}, 0
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		id := f.Header().StreamID
		switch v := f.(type) {
		case *http2.SettingsFrame:
			if !v.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
			continue
		case *http2.MetaHeadersFrame:
			began[id] = true
		case *http2.RSTStreamFrame:
			if began[id] && reopened < attackReopens {
				reset()
				reopened++
				if open(1) != nil {
					return
				}
			}
		default:
			continue
		}
		if id < uint32(2*a.streams) && !seen[id] {
			seen[id] = true
			if first--; first == 0 {
				answered()
			}
		}
	}
}

// upgradeAttack asks for a WebSocket on /ws over HTTP/1.1 from local and
// keeps its connection open, idle, until stop; an answer that says the
// daemon is busy (429, 503) is asked again, up to upgradeTries times, so
// that tunnels take the places other requests free. status is called with
// the last response's status line.
func upgradeAttack(addr, local string, roots *x509.CertPool, stop <-chan struct{}, status func(string)) {
	line := "no attempt"
	for range upgradeTries {
		c, err := attackDial(addr, local, "http/1.1", roots)
		if err != nil {
			status(err.Error())
			return
		}
		fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZSAlZA==\r\n\r\n")
		line, err = bufio.NewReader(c).ReadString('\n')
		if err != nil {
			line = err.Error()
		}
		line = strings.TrimSpace(line)
		if strings.Contains(line, " 429 ") || strings.Contains(line, " 503 ") {
			c.Close()
			continue
		}
		status(line)
		<-stop
		c.Close()
		return
	}
	status(line)
}

const upgradeTries = 40

// normalClient is an ordinary Go client from 127.0.0.1, over HTTP/2 or
// HTTP/1.1.
func normalClient(t *testing.T, roots *x509.CertPool, h2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: h2}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// fetchWithin gets path and says what is wrong with the answer: not 200,
// not whole, not over the protocol asked, or later than bound.
func fetchWithin(c *http.Client, url string, major int, want string, bound time.Duration) string {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Sec-Fetch-Dest", "document")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	switch {
	case err != nil:
		return fmt.Sprintf("%d, body: %v", resp.StatusCode, err)
	case resp.StatusCode != http.StatusOK || resp.ProtoMajor != major:
		return fmt.Sprintf("%s %d after %v: %.200s", resp.Proto, resp.StatusCode, took, body)
	case !strings.HasSuffix(string(body), want):
		return fmt.Sprintf("%d bytes not ending in %q", len(body), want)
	case took > bound:
		return fmt.Sprintf("200 after %v, more than %v", took, bound)
	}
	return ""
}

// TestNormalClientServedDuringHTTP2AndUpgradeAttacks: issue 30's items 1
// and 2 against one daemon at once. From 127.0.0.2, HTTP/2 connections
// with a zero window open 200 streams for a 106-byte asset or 40 for a
// page, and open again what is reset; from 127.0.0.3 to .6, 128 HTTP/1.1
// clients ask for a WebSocket on a path whose origin answers 101 and
// holds. Each attack alone took every request place (HTTP/2 for
// write_timeout, the tunnels for as long as they stayed open), so every
// other client got 503. A normal client from 127.0.0.1, over HTTP/2 and
// over HTTP/1.1, must get its page and its asset with 200 in under 2 s,
// request after request, until the attack has had a held stream reset
// and opened it again.
func TestNormalClientServedDuringHTTP2AndUpgradeAttacks(t *testing.T) {
	origin := attackOrigin(t)
	addr, roots := startTLSDaemon(t, origin.URL, "max_concurrent_pages = 16") // 128 requests, as on 2 cores
	stop := make(chan struct{})
	var attackers sync.WaitGroup
	t.Cleanup(func() { close(stop); attackers.Wait() })

	var established sync.WaitGroup
	resetSeen, resetOnce := make(chan struct{}), sync.Once{}
	reset := func() { resetOnce.Do(func() { close(resetSeen) }) }
	for _, a := range []struct {
		path    string
		streams int
	}{{"/asset.wasm", 200}, {"/asset.wasm", 200}, {"/page", 40}, {"/page", 40}} {
		h := &h2Attack{addr: addr, local: "127.0.0.2", path: a.path, roots: roots, streams: a.streams, stop: stop}
		var once sync.Once
		established.Add(1)
		attackers.Add(1)
		go func() {
			defer attackers.Done()
			defer once.Do(established.Done) // a connection that could not start
			h.run(func() { once.Do(established.Done) }, reset)
		}()
	}
	const tunnels = 128
	statuses := make(chan string, tunnels)
	for i := range tunnels {
		attackers.Add(1)
		go func() {
			defer attackers.Done()
			upgradeAttack(addr, fmt.Sprintf("127.0.0.%d", 3+i%4), roots, stop, func(s string) { statuses <- s })
		}()
	}
	switched := 0
	for range tunnels {
		if s := <-statuses; strings.Contains(s, " 101 ") {
			switched++
		}
	}
	established.Wait()
	if switched > 0 {
		t.Errorf("%d of %d Upgrade requests were switched to a tunnel", switched, tunnels)
	}

	_, port, _ := net.SplitHostPort(addr)
	h2c, h1c := normalClient(t, roots, true), normalClient(t, roots, false)
	const least, bound = 10, 2 * time.Second
	deadline := time.After(30 * time.Second)
	for i := 0; ; i++ {
		for _, c := range []struct {
			name   string
			client *http.Client
			major  int
		}{{"HTTP/2", h2c, 2}, {"HTTP/1.1", h1c, 1}} {
			for _, p := range []struct{ path, end string }{{"/page", "</html>"}, {"/asset.wasm", attackAsset}} {
				if why := fetchWithin(c.client, "https://localhost:"+port+p.path, c.major, p.end, bound); why != "" {
					t.Fatalf("normal client over %s, request %d for %s during the attacks: %s", c.name, i, p.path, why)
				}
			}
		}
		if i+1 < least {
			continue
		}
		select {
		case <-resetSeen:
			t.Logf("%d rounds served, through a held stream's reset", i+1)
			return
		case <-deadline:
			t.Fatalf("no held HTTP/2 stream was reset in 30 s (%d rounds served)", i+1)
		default:
		}
	}
}
