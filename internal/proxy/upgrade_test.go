package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
)

// switchingOrigin answers 101 Switching Protocols on /ws whatever the
// request asked, and holds the connection as an idle WebSocket would;
// every other path is an ordinary page. It counts the requests that
// carried Upgrade and the connections it still holds.
type switchingOrigin struct {
	upgrades atomic.Int32
	held     sync.WaitGroup
}

func (o *switchingOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "" {
		o.upgrades.Add(1)
	}
	if r.URL.Path != "/ws" {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head></head><body>page</body></html>")
		return
	}
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	o.held.Add(1)
	defer o.held.Done()
	defer c.Close()
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	brw.Flush()
	io.Copy(io.Discard, c) // idle until the other end closes
}

// 128 idle 101 tunnels took every request place for as long as they stayed
// open (past write_timeout), and bytes inside them passed no request
// limit. ssatd now opens no tunnel (Fastly Compute's plain backend fetch,
// upgrade.go): the offer to switch is not sent to the origin, an origin
// that switches anyway is answered 502 and its connection closed, and a
// normal client beside the attack keeps getting its page at once.
func TestUpgradeTunnelsDoNotHoldRequestPlaces(t *testing.T) {
	const places, attackers = 4, 16
	queue := 2 * time.Second
	origin := &switchingOrigin{}
	e := newEnv(t, origin, func(c *config.Config) {
		c.Server.MaxRequestsInProgress = places
		c.Server.PageQueueTimeout = config.Duration{Duration: queue}
	})
	addr := e.front.Listener.Addr().String()
	statuses := make(chan string, attackers)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range attackers {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		go func() {
			fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
				"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZSAlZA==\r\n\r\n", testDomain)
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				line = fmt.Sprintf("attacker %d: %v", i, err)
			}
			statuses <- strings.TrimSpace(line)
			// The connection stays open, idle, as the attack keeps it.
		}()
	}
	for range attackers {
		if got := <-statuses; got != "HTTP/1.1 502 Bad Gateway" {
			t.Errorf("an Upgrade request to a switching origin got %q, want a 502 and no tunnel", got)
		}
	}
	// The attackers' connections are still open; a normal client is
	// served at once, never queued until the 503.
	for i := range 2 * places {
		start := time.Now()
		resp, body := e.mustGet(t, "/page", navigate)
		if took := time.Since(start); resp.StatusCode != http.StatusOK || took >= queue {
			t.Errorf("page %d beside the tunnels: %d after %v (queue timeout %v): %s", i, resp.StatusCode, took, queue, body)
			break
		}
	}
	// Every connection the origin switched has been closed by ssatd.
	closed := make(chan struct{})
	go func() { origin.held.Wait(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("a tunnel to the origin stays open")
	}
	// An offer to switch on an ordinary page (curl's h2c) gets the page.
	resp, _ := e.mustGet(t, "/page", navigate, header("Connection", "Upgrade, HTTP2-Settings"), header("Upgrade", "h2c"), header("HTTP2-Settings", "AAMAAABkAAQAoAAAAAIAAAAA"))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a page with an h2c offer: %d", resp.StatusCode)
	}
	if n := origin.upgrades.Load(); n != 0 {
		t.Errorf("the origin saw %d requests asking to switch protocols", n)
	}
	lines := e.logs.waitAccess(t, attackers)
	n := 0
	for _, l := range lines {
		if l.ContextMap()["reason"] == reasonSwitchingProtocols.String() {
			n++
		}
	}
	if n != attackers {
		t.Errorf("%d access lines with reason %s, want %d", n, reasonSwitchingProtocols, attackers)
	}
}

// A client's Upgrade value that is not printable ASCII made ReverseProxy
// answer 502 ("client tried to switch to invalid protocol"): client input
// never causes a 5xx. The offer is ignored like any other.
func TestUnprintableUpgradeIsNotA5xx(t *testing.T) {
	origin := &switchingOrigin{}
	e := newEnv(t, origin)
	lines := rawExchange(t, e.front.Listener.Addr().String(),
		"GET /page HTTP/1.1\r\nHost: "+testDomain+"\r\nConnection: Upgrade, close\r\nUpgrade: web\x80socket\r\n\r\n")
	if len(lines) == 0 || lines[0] != "HTTP/1.1 200 OK" {
		t.Fatalf("response %q", lines)
	}
	if n := origin.upgrades.Load(); n != 0 {
		t.Errorf("the origin saw %d requests asking to switch protocols", n)
	}
}
