package identity

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/ssat"
	"github.com/ssatd/ssatd/internal/store"
	"github.com/ssatd/ssatd/internal/testutil"
)

const (
	testPassphrase = "a-test-passphrase-of-at-least-32-characters"
	testDomain     = "news.test"
	partnerToken   = "partner-one-token-at-least-32-bytes-long"
)

// fakeSeam decides consent from the X-Test-Consent header: "allow",
// "withdraw", or anything else (neither); the client is the peer.
type fakeSeam struct{}

func (fakeSeam) View(r *http.Request) family.View {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	ip, _ := netip.ParseAddr(host)
	return family.View{Host: testDomain, Scheme: "https", ClientIP: ip}
}
func (fakeSeam) Refuse(w http.ResponseWriter, _ *http.Request, a family.Answer, _ error) { a.Write(w) }
func (fakeSeam) Ineligible(*http.Request, string)                                        {}
func (fakeSeam) Consent(r *http.Request) privacy.Decision {
	switch r.Header.Get("X-Test-Consent") {
	case "allow":
		return privacy.Decision{EC: privacy.ECGate{Allowed: true}}
	case "withdraw":
		return privacy.Decision{EC: privacy.ECGate{Withdrawn: true}}
	}
	return privacy.Decision{}
}
func (fakeSeam) Slots(string) []ssat.Slot { return nil }
func (fakeSeam) IsBot(ua string) bool     { return ua == "Googlebot" }
func (fakeSeam) Auction(*http.Request, family.AuctionCall) (map[string]ssat.Bid, time.Duration) {
	return nil, 0
}
func (fakeSeam) Logger() *zap.Logger { return zap.NewNop() }

func testConfig() *config.Config {
	c := config.Defaults()
	c.Publisher.Domain = testDomain
	c.EC.Passphrase = testPassphrase
	c.EC.Partners = []config.ECPartner{{Name: "One", SourceDomain: "one.example", APIToken: partnerToken,
		OpenRTBAtype: 3, BatchRateLimit: 3}}
	return c
}

// site serves the family over loopback: "/" is a page whose headers go
// through Page (the origin set X-Ts-Ec), and the partner routes.
func site(t *testing.T, st store.Store) (*httptest.Server, *Family, *atomic.Int64) {
	t.Helper()
	var failed atomic.Int64
	f := New(testConfig(), fakeSeam{}, st, func() { failed.Add(1) })
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ts-Ec", "from-origin")
		w.Header().Set("X-Ts-one.example", "from-origin")
		f.Page(r, w.Header(), "")
		_, _ = w.Write([]byte("<html>page</html>"))
	})
	mux.Handle("GET "+IdentifyPath, f.Identify())
	mux.Handle("OPTIONS "+IdentifyPath, f.Identify())
	mux.Handle("POST "+BatchSyncPath, f.BatchSync())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, f, &failed
}

// stores are the stores every wiring test runs against: the embedded one
// and Redis (SSATD_REDIS, or a redis-server of the test's own).
var stores = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"bolt", func(t *testing.T) store.Store {
		s, err := store.OpenBolt(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
	{"redis", func(t *testing.T) store.Store {
		s, err := store.OpenRedis(store.RedisOptions{URL: testutil.RedisURL(t),
			Prefix: fmt.Sprintf("ssatd-identity-test-%d-%d:", os.Getpid(), prefixes.Add(1))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

var prefixes atomic.Int64

// navigate is a browser's document navigation to srv, with consent
// (allow, withdraw, or "") and the cookies given.
func navigate(t *testing.T, srv *httptest.Server, consent string, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Header.Set("User-Agent", "Mozilla/5.0")
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("X-Test-Consent", consent)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
