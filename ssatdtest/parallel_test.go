package ssatdtest_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/devcert"
	"github.com/ssatd/ssatd/ssatdtest"
)

// Two parallel tests, each with its daemon: the first ends, and its leak
// check runs, while the second's daemon still serves. The check compared
// every goroutine of the process with those at Start, so it found the
// second daemon's and failed the first test.
func TestParallelTestsSeeOnlyTheirOwnDaemonsGoroutines(t *testing.T) {
	secondServing := make(chan struct{})
	firstChecked := make(chan struct{})
	t.Run("group", func(t *testing.T) {
		t.Run("first", func(t *testing.T) {
			t.Parallel()
			// Registered before Start, so it runs after Start's check.
			t.Cleanup(func() { close(firstChecked) })
			startWithTraffic(t)
			select {
			case <-secondServing:
			case <-time.After(30 * time.Second):
				t.Fatal("the second test never started its daemon")
			}
		})
		t.Run("second", func(t *testing.T) {
			t.Parallel()
			startWithTraffic(t)
			close(secondServing)
			select {
			case <-firstChecked:
			case <-time.After(30 * time.Second):
				t.Fatal("the first test's check never ran")
			}
		})
	})
}

// startWithTraffic starts an origin, a bidder and a daemon, and serves one
// page, so that the daemon holds connections and their goroutines.
func startWithTraffic(t *testing.T) *ssatdtest.Server {
	t.Helper()
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{Offers: []ssatdtest.Offer{{Slot: "atf", Seat: "a", Price: "1.00"}}})
	srv := ssatdtest.Start(t, config(origin.URL, bidder.URL))
	resp, body, err := srv.Navigate("/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("navigate: %v", err)
	}
	if b := parse(t, body).Bids["atf"]; b.Bidder != "a" {
		t.Fatalf("bids %+v", parse(t, body).Bids)
	}
	return srv
}

// Navigate sends what a browser sends, so the page gets the ad stack; a
// request without those headers does not.
func TestNavigateMakesAnEligibleRequest(t *testing.T) {
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{})
	srv := ssatdtest.Start(t, config(origin.URL, bidder.URL))
	resp, body, err := srv.Navigate("/news?x=1")
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "private, max-age=0" {
		t.Fatalf("navigate: %v %v", err, resp)
	}
	if p := parse(t, body); p.Slots == nil || p.Bids == nil {
		t.Errorf("a navigation got no ad stack: slots %v bids %v", p.Slots, p.Bids)
	}
	if reqs := bidder.Requests(); len(reqs) != 1 || reqs[0].Site.Page != srv.URL+"/news?x=1" {
		t.Errorf("bid requests %+v", reqs)
	}
	resp, err = srv.Client().Get(srv.URL + "/news")
	if err != nil {
		t.Fatal(err)
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if p := parse(t, body); err != nil || p.Slots != nil || len(bidder.Requests()) != 1 {
		t.Errorf("a plain GET was treated as a navigation: %v, slots %v", err, p.Slots)
	}
}

// Over TLS, Client trusts the daemon's certificate and speaks HTTP/2;
// another client does not trust it.
func TestClientTrustsTheDaemonOverTLS(t *testing.T) {
	files, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{})
	cfg := strings.Replace(config(origin.URL, bidder.URL), "[auction]",
		"[server]\ntls_cert_file = \""+files.Cert+"\"\ntls_key_file = \""+files.Key+"\"\n\n[auction]", 1)
	srv := ssatdtest.Start(t, cfg)
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("URL %q", srv.URL)
	}
	resp, body, err := srv.Navigate("/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || resp.TLS == nil {
		t.Errorf("protocol %s, TLS %v; want HTTP/2 over TLS", resp.Proto, resp.TLS != nil)
	}
	if p := parse(t, body); p.Slots == nil || len(p.Links) != 1 || p.Links[0] != srv.URL+"/next" {
		t.Errorf("page over TLS: %+v", p)
	}
	other := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}
	if resp, err := other.Get(srv.URL + "/"); err == nil {
		resp.Body.Close()
		t.Errorf("a client without the daemon's certificate connected")
	}
	other.CloseIdleConnections()
}
