package proxy

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/testutil"
)

// seenOrigin is a heldOrigin that records every path the origin was asked
// for, so that a test can show a refused request never reached it.
type seenOrigin struct {
	held *heldOrigin
	mu   sync.Mutex
	seen []string
}

func (o *seenOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.seen = append(o.seen, r.URL.Path)
	o.mu.Unlock()
	o.held.ServeHTTP(w, r)
}

func (o *seenOrigin) paths() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

// With the gate full, a new request is answered 503 with Retry-After
// before its origin request: an eligible navigation when every page place
// is taken, any request when every request place is. The origin never
// sees it. The held request's headers have
// arrived (startHeld) before the second request is made, so its place is
// taken; the queue timeout is the only wait.
func TestFullGateRefusesBeforeTheOriginFetch(t *testing.T) {
	cases := []struct {
		name   string
		limit  func(*config.Config)
		path   string
		opts   []reqOpt
		answer string
	}{
		{"eligible navigation, pages full", pagesLimit(50 * time.Millisecond), "/page", []reqOpt{navigate},
			"too many pages in progress"},
		{"asset, requests full", func(c *config.Config) {
			c.Server.MaxRequestsInProgress = 1
			c.Server.PageQueueTimeout = config.Duration{Duration: 50 * time.Millisecond}
		}, "/asset.js", []reqOpt{header("Sec-Fetch-Dest", "script")}, "too many requests in progress"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := &seenOrigin{held: &heldOrigin{release: make(chan struct{})}}
			e := newEnv(t, o, tc.limit)
			o.held.page = e.page
			held := e.startHeld(t)

			resp, body := e.mustGet(t, tc.path, tc.opts...)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
				!strings.Contains(string(body), tc.answer) {
				t.Fatalf("status %d, Retry-After %q, body %q; want 503, 1, %q",
					resp.StatusCode, resp.Header.Get("Retry-After"), body, tc.answer)
			}
			if got := o.paths(); len(got) != 1 || got[0] != "/held" {
				t.Errorf("the origin was asked for %q; want only the held page", got)
			}
			if n := e.guest.Metrics().Failures(reasonOverloaded.String()); n != 1 {
				t.Errorf("overloaded count %d, want 1", n)
			}
			close(o.held.release)
			if r := <-held; r.err != nil || r.status != http.StatusOK {
				t.Fatalf("held page: status %d, err %v", r.status, r.err)
			}
			// Both places are free again: the same request is served.
			if resp, _ := e.mustGet(t, tc.path, tc.opts...); resp.StatusCode != http.StatusOK {
				t.Errorf("after the held page ended: status %d, want 200", resp.StatusCode)
			}
		})
	}
}

// An eligible navigation whose response is no page (here a script) gives
// back the page place it took before the fetch: with one place and no
// queue, a page after three of them is still served.
func TestEarlyPagePlaceOfANonPageIsFreedAtClassification(t *testing.T) {
	e, _ := newHeldEnv(t, pagesLimit(0))
	for i := 0; i < 3; i++ {
		if resp, body := e.mustGet(t, "/asset.js", navigate); resp.StatusCode != http.StatusOK || string(body) != testAsset {
			t.Fatalf("asset as a navigation: status %d body %q", resp.StatusCode, body)
		}
	}
	if resp, _ := e.mustGet(t, "/page", navigate); resp.StatusCode != http.StatusOK {
		t.Fatalf("page after three non-page navigations: status %d, want 200 (a place leaked)", resp.StatusCode)
	}
}

// A tsjs callback runs an auction, so it counts among the requests in
// progress: with the one place held by a page, POST /auction is refused 503
// with Retry-After, and served once the page has ended. It was served past
// the bound (admission was decided only for proxied requests).
func TestCallbackTakesARequestPlace(t *testing.T) {
	o := &seenOrigin{held: &heldOrigin{release: make(chan struct{})}}
	e := newEnv(t, o, func(c *config.Config) {
		c.Server.MaxRequestsInProgress = 1
		c.Server.PageQueueTimeout = config.Duration{Duration: 50 * time.Millisecond}
	})
	o.held.page = e.page
	held := e.startHeld(t)
	resp, body := e.post(t, "/auction", "application/json", testutil.TsjsAdRequest)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("with the requests full: status %d, Retry-After %q, body %q; want 503, 1",
			resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(o.held.release)
	if r := <-held; r.err != nil || r.status != http.StatusOK {
		t.Fatalf("held page: status %d, err %v", r.status, r.err)
	}
	if resp, body := e.post(t, "/auction", "application/json", testutil.TsjsAdRequest); resp.StatusCode != http.StatusOK {
		t.Errorf("after the held page ended: status %d, body %q; want 200", resp.StatusCode, body)
	}
}
