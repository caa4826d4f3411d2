package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// connServer is a loopback server that counts its open connections, as
// its http.Server reports them (ConnState), and says when that changes.
type connServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	open    map[net.Conn]bool
	opened  int           // connections ever accepted
	changed chan struct{} // one pending signal per change
}

func newConnServer(t *testing.T, h http.HandlerFunc) *connServer {
	s := &connServer{open: map[net.Conn]bool{}, changed: make(chan struct{}, 1)}
	s.srv = httptest.NewUnstartedServer(h)
	s.srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		s.mu.Lock()
		switch st {
		case http.StateNew:
			s.open[c] = true
			s.opened++
		case http.StateClosed, http.StateHijacked:
			delete(s.open, c)
		}
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *connServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

func (s *connServer) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// waitOpen waits, on the server's own connection events, until at most
// want connections are open; it fails the test with what stays open.
func (s *connServer) waitOpen(t *testing.T, name string, want int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for s.count() > want {
		select {
		case <-s.changed:
		case <-timeout:
			t.Fatalf("%s: %d connections still open, want at most %d", name, s.count(), want)
		}
	}
}

// TestReloadReleasesOldGenerationsConnections: after each SIGHUP the
// replaced configuration's idle connections to the origin and to the bid
// endpoint are closed once its last request has ended, at once when none
// runs, and when a page that started before the reload ends otherwise.
// After 12 reloads with a page between each, the origin and the bidder
// each hold the current generation's one connection. They held one per
// generation (goroutines 13 → 549 after 24 reloads in the issue) until the
// transports' 90 s idle timeout.
func TestReloadReleasesOldGenerationsConnections(t *testing.T) {
	origin := newSlowPageOrigin(t)
	// slowPageOrigin's pages, from a server that counts its connections.
	pages := newConnServer(t, func(w http.ResponseWriter, r *http.Request) {
		origin.srv.Config.Handler.ServeHTTP(w, r)
	})
	bidder := newConnServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	conf := func(unit string) string {
		c := reloadConfig(pages.srv.URL, unit, "")
		c = strings.Replace(c, `provider = "static"`, `provider = "openrtb"
timeout_ms = 2000

[[auction.openrtb]]
name = "b"
url = "`+bidder.srv.URL+`/openrtb2/auction"
timeout_ms = 2000`, 1)
		return c
	}
	rd := startReloadingDaemon(t, conf("/1/0"))
	released := make(chan struct{}, 64)
	rd.d.onGenRelease = func() { released <- struct{}{} }
	waitReleased := func(what string) {
		t.Helper()
		select {
		case <-released:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no generation released its connections", what)
		}
	}
	c := newTestClient(t)
	base := "http://" + rd.clientAddr
	page := func(want string) {
		t.Helper()
		if status, _, body := get(t, c, base+"/page", "localhost"); status != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("/page = %d without %s:\n%s", status, want, body)
		}
	}
	page("/1/0")
	for i := 1; i <= 12; i++ {
		unit := fmt.Sprintf("/1/%d", i)
		if r := rd.reload(t, conf(unit)); r != reloadOK {
			t.Fatalf("reload %d: %q\n%s", i, r, rd.logs.String())
		}
		waitReleased(fmt.Sprintf("reload %d", i)) // no request ran on the replaced generation
		page(unit)
	}
	// Each generation dialled its own: there were connections to release.
	if pages.accepted() < 13 || bidder.accepted() < 13 {
		t.Fatalf("the origin accepted %d connections, the bidder %d: want one per generation (13)", pages.accepted(), bidder.accepted())
	}
	pages.waitOpen(t, "origin", 1)
	bidder.waitOpen(t, "bid endpoint", 1)

	// A page in flight keeps its generation's connections until it ends.
	slow := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, base+"/slow", nil)
		req.Host = "localhost"
		req.Header.Set("Accept", "text/html")
		resp, err := c.Do(req)
		if err != nil {
			slow <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		slow <- resp.StatusCode
	}()
	<-origin.started
	if r := rd.reload(t, conf("/1/last")); r != reloadOK {
		t.Fatalf("last reload: %q", r)
	}
	page("/1/last")
	select {
	case <-released:
		t.Fatal("the generation serving /slow released its connections while /slow ran")
	default:
	}
	close(origin.release)
	if status := <-slow; status != http.StatusOK {
		t.Fatalf("/slow = %d", status)
	}
	waitReleased("the page in flight ended")
	pages.waitOpen(t, "origin after the page in flight ended", 1)
	bidder.waitOpen(t, "bid endpoint after the page in flight ended", 1)
}
