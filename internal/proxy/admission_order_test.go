package proxy

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
)

// fakeClock is a gateClock whose time moves only when the test advances
// it, so that a queue timeout can run out at a chosen step.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), timers: map[*fakeTimer]struct{}{}}
}

func (c *fakeClock) gateClock() gateClock { return gateClock{now: c.Now, timer: c.timer} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) timer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	c.timers[t] = struct{}{}
	return t.c, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, pending := c.timers[t]
		delete(c.timers, t)
		return pending
	}
}

// Advance moves the time on by d and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.at.After(c.now) {
			t.c <- c.now
			delete(c.timers, t)
		}
	}
}

// pending returns when the timers not yet fired are due.
func (c *fakeClock) pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var at []time.Time
	for t := range c.timers {
		at = append(at, t.at)
	}
	return at
}

// fetched is one response, read whole, from a request made in a goroutine.
type fetched struct {
	status     int
	retryAfter string
	body       string
	err        error
}

func (e *env) fetch(path string, opts ...reqOpt) <-chan fetched {
	done := make(chan fetched, 1)
	go func() {
		req, err := http.NewRequest(http.MethodGet, e.front.URL+path, nil)
		if err != nil {
			done <- fetched{err: err}
			return
		}
		req.Host = testDomain
		for _, o := range opts {
			o(req)
		}
		resp, err := client.Do(req)
		if err != nil {
			done <- fetched{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- fetched{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b), err: err}
	}()
	return done
}

// uriOrigin serves heldOrigin's paths, records every request URI in
// order, and holds /slow.wasm (a pass-through asset) until slow is closed,
// telling arrived when it is asked for it.
type uriOrigin struct {
	held    *heldOrigin
	arrived chan struct{}
	slow    chan struct{}
	mu      sync.Mutex
	seen    []string
}

func (o *uriOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.seen = append(o.seen, r.URL.RequestURI())
	o.mu.Unlock()
	if r.URL.Path != "/slow.wasm" {
		o.held.ServeHTTP(w, r)
		return
	}
	close(o.arrived)
	select {
	case <-o.slow:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/wasm")
	_, _ = io.WriteString(w, testAsset)
}

func (o *uriOrigin) uris() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.seen)
}

func newURIEnv(t *testing.T, mutate func(*config.Config)) (*env, *uriOrigin) {
	o := &uriOrigin{held: &heldOrigin{release: make(chan struct{})}, arrived: make(chan struct{}), slow: make(chan struct{})}
	e := newEnv(t, o, mutate)
	o.held.page = e.page
	return e, o
}

// Under sustained overload the queue never empties: in arrival order,
// every admitted page would first wait nearly the whole queue timeout
// (at c=256 the median 200 waited 480 ms of 500). A freed place goes to
// the newest waiter instead: with the one page place held and two
// navigations waiting, the later one is fetched first.
func TestFreedPagePlaceGoesToTheNewestWaiter(t *testing.T) {
	e, o := newURIEnv(t, pagesLimit(time.Hour)) // never runs out: the hooks order the test
	held := e.startHeld(t)
	waiting := make(chan struct{}, 2)
	e.guest.pages.waiting = func() { waiting <- struct{}{} }
	older := e.fetch("/page?arrived=first", navigate)
	<-waiting
	newer := e.fetch("/page?arrived=second", navigate)
	<-waiting
	close(o.held.release)
	for _, c := range []<-chan fetched{asFetched(held), newer, older} {
		if r := <-c; r.err != nil || r.status != http.StatusOK || !strings.Contains(r.body, "</html>") {
			t.Fatalf("status %d, err %v, body %.80q", r.status, r.err, r.body)
		}
	}
	want := []string{"/held", "/page?arrived=second", "/page?arrived=first"}
	if got := o.uris(); !slices.Equal(got, want) {
		t.Errorf("origin asked for %q, want %q: the oldest waiter got the freed place", got, want)
	}
}

// asFetched turns startHeld's channel into a fetched one.
func asFetched(c <-chan heldResult) <-chan fetched {
	out := make(chan fetched, 1)
	go func() {
		r := <-c
		out <- fetched{status: r.status, body: string(r.body), err: r.err}
	}()
	return out
}

// A navigation that waits first for a request place and then for a page
// place waits one server.page_queue_timeout in all, not one per gate (at
// c=256 the 200s waited up to twice the timeout before any work, and the
// 503s took as long). Here it waits 6 s of a 10 s timeout for a request
// place, then for the page place: it is refused 503 with Retry-After when
// the 10 s are up, not 10 s after it reached the page gate. An eligible
// navigation waits for its page place before the origin fetch; a page that
// is not eligible (a crawler's) after classification, with what is left.
func TestRequestAndPageGatesShareOneQueueTimeout(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        []reqOpt
		originAsked bool // the refused page reached the origin
	}{
		{"eligible navigation, before the fetch", []reqOpt{navigate}, false},
		{"crawler's page, after classification", []reqOpt{navigate, header("User-Agent", "Googlebot/2.1")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const timeout = 10 * time.Second
			e, o := newURIEnv(t, func(c *config.Config) {
				c.Server.MaxConcurrentPages = 1
				c.Server.MaxRequestsInProgress = 2
				c.Server.PageQueueTimeout = config.Duration{Duration: timeout}
			})
			fc := newFakeClock()
			e.guest.requests.clock, e.guest.pages.clock = fc.gateClock(), fc.gateClock()
			start := fc.Now()
			held := e.startHeld(t) // a request place and the page place
			asset := e.fetch("/slow.wasm", header("Sec-Fetch-Dest", "script"))
			<-o.arrived // the other request place
			requestWait, pageWait := make(chan struct{}), make(chan struct{})
			e.guest.requests.waiting = func() { close(requestWait) }
			e.guest.pages.waiting = func() { close(pageWait) }
			page := e.fetch("/page", tc.opts...)
			<-requestWait
			fc.Advance(6 * time.Second)
			close(o.slow) // the asset ends and hands its request place on
			if r := <-asset; r.err != nil || r.status != http.StatusOK {
				t.Fatalf("asset: status %d, err %v", r.status, r.err)
			}
			<-pageWait
			if due := fc.pending(); len(due) != 1 || !due[0].Equal(start.Add(timeout)) {
				fc.Advance(time.Hour) // answer the page whatever its deadline, then fail
				<-page
				close(o.held.release)
				<-held
				t.Fatalf("the page place's wait ends at %v, want %v: one timeout per gate", due, start.Add(timeout))
			}
			fc.Advance(timeout - 6*time.Second)
			r := <-page
			if r.err != nil || r.status != http.StatusServiceUnavailable || r.retryAfter != "1" ||
				!strings.Contains(r.body, "too many pages in progress") {
				t.Errorf("page: status %d, Retry-After %q, body %q, err %v; want 503 with Retry-After 1", r.status, r.retryAfter, r.body, r.err)
			}
			close(o.held.release)
			if h := <-held; h.err != nil || h.status != http.StatusOK {
				t.Fatalf("held page: status %d, err %v", h.status, h.err)
			}
			if got := o.uris(); slices.Contains(got, "/page") != tc.originAsked {
				t.Errorf("origin asked for %q; the refused page reaching it: %v, want %v", got, !tc.originAsked, tc.originAsked)
			}
		})
	}
}

// A place handed to a waiter just as its wait runs out, or as its client
// leaves, is passed on rather than lost: after many such races every
// place is free again.
func TestPlaceHandedAsTheWaitEndsIsNotLost(t *testing.T) {
	for i := 0; i < 200; i++ {
		fc := newFakeClock()
		g := newPageGate(1, time.Second)
		g.clock = fc.gateClock()
		held, err := g.admit(context.Background(), g.deadline(0))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		waiting := make(chan struct{})
		g.waiting = func() { close(waiting) }
		type result struct {
			slot *pageSlot
			err  error
		}
		done := make(chan result, 1)
		go func() {
			s, err := g.admit(ctx, g.deadline(0))
			done <- result{s, err}
		}()
		<-waiting
		if i%2 == 0 {
			fc.Advance(time.Second)
		} else {
			cancel()
		}
		held.release()
		r := <-done
		cancel()
		if r.err == nil {
			r.slot.release()
		}
		if n := g.inUse(); n != 0 {
			t.Fatalf("round %d: %d places taken after every holder left (admitted: %v)", i, n, r.err == nil)
		}
	}
}
