package firstparty

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// No fetch, connection or handler outlives its request.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testSecret = "unit-test-proxy-secret"

var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// thirdParty is a stand-in third party on 127.0.0.1 that records what it
// was asked.
type thirdParty struct {
	*httptest.Server
	hits atomic.Int32
	last atomic.Pointer[http.Request]
}

func newThirdParty(t *testing.T, h http.HandlerFunc) *thirdParty {
	t.Helper()
	tp := &thirdParty{}
	tp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp.hits.Add(1)
		tp.last.Store(r.Clone(r.Context()))
		h(w, r)
	}))
	t.Cleanup(tp.Close)
	return tp
}

// front serves a family built from cfg over loopback.
func front(t *testing.T, cfg Config, deps Deps) (*Family, *httptest.Server) {
	t.Helper()
	if cfg.ProxySecret == "" {
		cfg.ProxySecret = testSecret
	}
	f, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(func() { srv.Close(); f.Close() })
	return f, srv
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type answer struct {
	code   int
	header http.Header
	body   string
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func get(t *testing.T, u string, hdr ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	return do(t, req)
}

func post(t *testing.T, u, ctype, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	return do(t, req)
}

// signed is the /first-party/<kind> URL for clear under the test secret.
func signed(t *testing.T, srv *httptest.Server, path, clear string, extra ...Pair) string {
	t.Helper()
	return srv.URL + testSigner(t).signURL(clear, path, extra...)
}

func expiry(d time.Duration) Pair {
	return Pair{paramExp, strconv.FormatInt(time.Now().Add(d).Unix(), 10)}
}
