package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/cputime"
	"github.com/ssatd/ssatd/internal/openrtb"
)

func fastlyLimits(c *config.Config) { c.Compute.Limits = config.ComputeLimitsFastly }

// countingOrigin serves the test page and counts the requests it saw.
func countingOrigin(e **env, hits *atomic.Int32, seen chan<- http.Header) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if seen != nil {
			seen <- r.Header.Clone()
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, (*e).page())
	}
}

// Under compute.limits = "fastly" a URL over Fastly's 8192 bytes is
// answered 414 before the origin is asked; at the limit, or without the
// limits, it is served.
func TestFastlyURLLimit(t *testing.T) {
	tests := []struct {
		name   string
		limits string
		size   int // bytes of the request target
		status int
	}{
		{"8192 bytes under fastly", config.ComputeLimitsFastly, 8192, http.StatusOK},
		{"8193 bytes under fastly", config.ComputeLimitsFastly, 8193, http.StatusRequestURITooLong},
		{"10 KB without limits", config.ComputeLimitsNone, 10 << 10, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			var hits atomic.Int32
			e = newEnv(t, countingOrigin(&e, &hits, nil), func(c *config.Config) { c.Compute.Limits = tt.limits })
			target := "/p?q=" + strings.Repeat("a", tt.size-len("/p?q="))
			resp, body := e.mustGet(t, target, navigate)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d (%.80s), want %d", resp.StatusCode, body, tt.status)
			}
			wantHits := int32(1)
			if tt.status != http.StatusOK {
				wantHits = 0
				if line := e.accessLine(t, 1); line["reason"] != reasonURLTooLong.String() || line["outcome"] != outcomeOK {
					t.Errorf("access line reason %v outcome %v", line["reason"], line["outcome"])
				}
			}
			if hits.Load() != wantHits {
				t.Errorf("origin asked %d times, want %d", hits.Load(), wantHits)
			}
		})
	}
}

// Fastly's header limits: more than 255 header fields, or one field over
// 69 KB, is answered 431 "Header overflow" before the origin is asked; a
// Cookie over 32 KB is removed and the request goes on with
// Fastly-Cookie-Overflow: 1.
func TestFastlyHeaderLimits(t *testing.T) {
	many := func(n int) reqOpt {
		return func(r *http.Request) {
			for i := range n {
				r.Header.Set(fmt.Sprintf("X-H%d", i), "v")
			}
		}
	}
	// The client sets exactly these fields: User-Agent is set, and the
	// test client asks for no compression.
	base := []reqOpt{navigate, header("User-Agent", "t")} // 2 fields
	tests := []struct {
		name   string
		opts   []reqOpt
		status int
	}{
		{"255 fields", []reqOpt{many(253)}, http.StatusOK},
		{"256 fields", []reqOpt{many(254)}, http.StatusRequestHeaderFieldsTooLarge},
		{"one field at 69 KB", []reqOpt{header("X-Big", strings.Repeat("b", 69<<10-len("X-Big")))}, http.StatusOK},
		{"one field over 69 KB", []reqOpt{header("X-Big", strings.Repeat("b", 69<<10-len("X-Big")+1))}, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			var hits atomic.Int32
			e = newEnv(t, countingOrigin(&e, &hits, nil), fastlyLimits,
				func(c *config.Config) { c.Server.MaxHeaderBytes = 256 << 10 })
			resp, body := e.mustGet(t, "/", append(base, tt.opts...)...)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d (%.80s), want %d", resp.StatusCode, body, tt.status)
			}
			if tt.status == http.StatusOK {
				if hits.Load() != 1 {
					t.Errorf("origin asked %d times, want 1", hits.Load())
				}
				return
			}
			if hits.Load() != 0 || !strings.Contains(string(body), "Header overflow") {
				t.Errorf("origin asked %d times, body %q; want 0 and Header overflow", hits.Load(), body)
			}
			if line := e.accessLine(t, 1); line["reason"] != reasonHeaderOverflow.String() || line["outcome"] != outcomeOK {
				t.Errorf("access line reason %v", line["reason"])
			}
		})
	}
	t.Run("cookie over 32 KB", func(t *testing.T) {
		for _, size := range []int{32 << 10, 32<<10 + 1} {
			var e *env
			var hits atomic.Int32
			seen := make(chan http.Header, 1)
			e = newEnv(t, countingOrigin(&e, &hits, seen), fastlyLimits)
			cookie := "c=" + strings.Repeat("x", size-2)
			resp, _ := e.mustGet(t, "/", append(base, header("Cookie", cookie))...)
			h := <-seen
			over := size > 32<<10
			if resp.StatusCode != http.StatusOK || (h.Get("Cookie") == "") != over || (h.Get("Fastly-Cookie-Overflow") == "1") != over {
				t.Errorf("%d-byte cookie: status %d, origin saw a cookie of %d bytes and Fastly-Cookie-Overflow %q",
					size, resp.StatusCode, len(h.Get("Cookie")), h.Get("Fastly-Cookie-Overflow"))
			}
		}
	})
}

// A page over compute.cpu_limit_ms is ended as Fastly ends a sandbox: a
// 503 when no byte was sent yet, an aborted response after. Each case sets
// cpu_scale so that the page is clearly over or clearly under the limit,
// even under -race.
func TestFastlyCPULimit(t *testing.T) {
	if cputime.Clock == "unavailable" {
		t.Skip("no thread CPU clock on this platform")
	}
	limit := func(ms, scale float64) func(*config.Config) {
		return func(c *config.Config) { fastlyLimits(c); c.Compute.CPULimitMS, c.Compute.CPUScale = ms, scale }
	}
	t.Run("over before the headers", func(t *testing.T) {
		var e *env
		var hits atomic.Int32
		// 0.001 ms at a scale of 100 is 10 ns of this machine's CPU.
		e = newEnv(t, countingOrigin(&e, &hits, nil), limit(0.001, 100))
		resp, body := e.mustGet(t, "/", navigate)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "compute.cpu_limit_ms") {
			t.Fatalf("status %d body %q; want 503 naming compute.cpu_limit_ms", resp.StatusCode, body)
		}
		if line := e.accessLine(t, 1); line["reason"] != reasonCPULimit.String() || line["outcome"] != outcomeError {
			t.Errorf("access line reason %v outcome %v", line["reason"], line["outcome"])
		}
	})
	t.Run("over after the headers", func(t *testing.T) {
		rest := make(chan struct{})
		var e *env
		e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			page := e.page()
			cut := strings.Index(page, "<body>")
			io.WriteString(w, page[:cut])
			w.(http.Flusher).Flush()
			select {
			case <-rest:
			case <-r.Context().Done():
				return
			}
			// 8 MB of text: tens of milliseconds of rewriting natively,
			// far past 50 ms / 20 = 2.5 ms; the head, above, is a few
			// hundred bytes, far under it.
			io.WriteString(w, strings.Repeat("<p>lorem <a href=\"/x\">ipsum</a> dolor</p>", 200000))
			io.WriteString(w, page[cut:])
		}), limit(50, 20))
		req, _ := http.NewRequest(http.MethodGet, e.front.URL+"/", nil)
		req.Host = testDomain
		navigate(req)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d before the page went over, want 200", resp.StatusCode)
		}
		close(rest)
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Fatal("the page over the CPU limit ended cleanly; want an aborted response")
		}
		if line := e.accessLine(t, 1); line["reason"] != reasonCPULimit.String() || line["outcome"] != outcomeAborted {
			t.Errorf("access line reason %v outcome %v", line["reason"], line["outcome"])
		}
		if n := e.guest.Metrics().Failures(reasonCPULimit.String()); n != 1 {
			t.Errorf("ssatd_failures_total{reason=%q} = %d, want 1", reasonCPULimit, n)
		}
	})
	t.Run("under", func(t *testing.T) {
		var e *env
		var hits atomic.Int32
		e = newEnv(t, countingOrigin(&e, &hits, nil), limit(50, 1))
		resp, body := e.mustGet(t, "/", navigate)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "</html>") {
			t.Fatalf("status %d, body %.80q: a small page is far under 50 ms", resp.StatusCode, body)
		}
	})
}

// bulkBids is a valid OpenRTB answer of n bids on the slot "top", priced
// from 1.00 to 7.99, about 77 bytes each: an answer this large is far
// more work to decode and rank than the test page is to rewrite.
func bulkBids(n int) []byte {
	b := []byte(`{"id":"bulk","cur":"USD","seatbid":[{"seat":"bulk","bid":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"b%d","impid":"top","price":%d.%02d,"adm":"<i>%d</i>","w":728,"h":90}`, i, 1+i%7, i%100, i)
	}
	return append(b, "]}]}"...)
}

// TestBidderAnswerCountsTowardCPULimit: the CPU the auction spends
// decoding and ranking a bidder's answer is the page's, as it is the
// guest's on Fastly. The test page with a one-bid answer takes well under
// 1.5 ms of CPU, under -race too; 13,000 bids (just under the 1 MiB an
// answer may have) take about 60 ms natively and 300 ms under -race. The
// limit, 8 ms, is over five times away from both.
func TestBidderAnswerCountsTowardCPULimit(t *testing.T) {
	if cputime.Clock == "unavailable" {
		t.Skip("no thread CPU clock on this platform")
	}
	const limitMS = 8
	tests := []struct {
		name    string
		bids    int
		limited bool // compute.limits = "fastly" with cpu_limit_ms = limitMS; else no limits
	}{
		{"one bid under the limit", 1, true},
		{"a huge answer over the limit", 13000, true},
		{"a huge answer counted without a limit", 13000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := bulkBids(tt.bids)
			if len(answer) >= auction.DefaultMaxBody {
				t.Fatalf("the answer is %d bytes, over the %d an endpoint may send", len(answer), auction.DefaultMaxBody)
			}
			huge := tt.bids > 1
			ep := newBidEndpoint(t, func(w http.ResponseWriter, _ *http.Request, _ openrtb.BidRequest) { w.Write(answer) })
			e := newEnv(t, htmlPage, withOpenRTB(60000, ep), diagnostics, func(c *config.Config) {
				c.Compute.CPUScale = 1
				if tt.limited {
					fastlyLimits(c)
					c.Compute.CPULimitMS = limitMS
				}
			})
			resp, body, err := e.get(t, "/news/a", navigate)
			line := e.accessLine(t, 1)
			if tt.limited && huge {
				// Ended as any page over the limit: a 503 if the auction
				// was done before the first bytes, else an aborted page.
				if err == nil && resp.StatusCode != http.StatusServiceUnavailable {
					t.Fatalf("status %d and the page read whole: the auction's CPU was not counted (access line %v)", resp.StatusCode, line)
				}
				if line["reason"] != reasonCPULimit.String() {
					t.Errorf("access line reason %v, want %s", line["reason"], reasonCPULimit)
				}
				return
			}
			if err != nil || resp.StatusCode != http.StatusOK || !strings.HasSuffix(string(body), "</html>") {
				t.Fatalf("status %v, err %v: want the whole page (access line %v)", resp, err, line)
			}
			if !strings.Contains(string(body), `\"hb_bidder\":\"bulk\"`) {
				t.Errorf("the bidder's answer did not reach the page: %s", body)
			}
			vcpu, err := strconv.Atoi(resp.Trailer.Get(TSVCPUMillis))
			if err != nil {
				t.Fatalf("%s trailer %q", TSVCPUMillis, resp.Trailer.Get(TSVCPUMillis))
			}
			cpu, _ := line["guest_cpu_ms"].(float64)
			if vcpu >= limitMS != huge || cpu >= limitMS != huge {
				t.Errorf("%d bids: vCPU %d ms, access line guest_cpu_ms %v; the limit is %d ms", tt.bids, vcpu, line["guest_cpu_ms"], limitMS)
			}
		})
	}
}

// A request past compute.max_runtime is ended: 503 while the origin has
// not answered, an aborted response once the page has started.
func TestFastlyRuntimeLimit(t *testing.T) {
	runtime := func(c *config.Config) {
		fastlyLimits(c)
		c.Compute.MaxRuntime = config.Duration{Duration: 300 * time.Millisecond}
	}
	t.Run("before the headers", func(t *testing.T) {
		e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // never answers
		}), runtime)
		resp, body := e.mustGet(t, "/", navigate)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "compute.max_runtime") {
			t.Fatalf("status %d body %q; want 503 naming compute.max_runtime", resp.StatusCode, body)
		}
		if line := e.accessLine(t, 1); line["reason"] != reasonRuntimeLimit.String() || line["outcome"] != outcomeError {
			t.Errorf("access line reason %v outcome %v", line["reason"], line["outcome"])
		}
		if n := e.guest.Metrics().Failures(reasonRuntimeLimit.String()); n != 1 {
			t.Errorf("ssatd_failures_total{reason=%q} = %d, want 1", reasonRuntimeLimit, n)
		}
	})
	// The limit's write deadline of now must not cut off the 503 itself.
	// The guest alone, without the client handler's per-write deadline
	// that re-arms it, lost the 503 every time (the client read EOF); in
	// the daemon it was lost when the 503 was written before the deadline
	// was set (seen under -race).
	t.Run("before the headers, the guest alone", func(t *testing.T) {
		e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // never answers
		}), runtime)
		bare := httptest.NewServer(e.guest)
		t.Cleanup(bare.Close)
		e.front = bare
		resp, body := e.mustGet(t, "/", navigate)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "compute.max_runtime") {
			t.Fatalf("status %d body %q; want 503 naming compute.max_runtime", resp.StatusCode, body)
		}
	})
	t.Run("after the headers", func(t *testing.T) {
		var e *env
		e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			page := e.page()
			io.WriteString(w, page[:strings.Index(page, "<body>")])
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the rest never comes
		}), runtime)
		resp, body, err := e.get(t, "/", navigate)
		if err == nil || resp == nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("got status %v, err %v, body %q; want a 200 cut off", resp, err, body)
		}
		if line := e.accessLine(t, 1); line["reason"] != reasonRuntimeLimit.String() || line["outcome"] != outcomeAborted {
			t.Errorf("access line reason %v outcome %v", line["reason"], line["outcome"])
		}
	})
}

// config's heap bound counts the pipeline's buffers as they are here.
func TestHeapBoundCountsPipelineBuffers(t *testing.T) {
	if got := rewriteBufSize + outBufSize + copyBufSize; got != config.PipelineBufferBytes {
		t.Fatalf("the pipeline's buffers are %d bytes, config.PipelineBufferBytes counts %d", got, config.PipelineBufferBytes)
	}
}

// A response blocked on a client that stopped reading is ended at
// compute.max_runtime too, not only at server.write_timeout: here a large
// pass-through body, whose copy to the client waits on the client alone.
func TestFastlyRuntimeLimitEndsAStalledClient(t *testing.T) {
	big := strings.Repeat("x", 64<<20) // far more than the socket buffers hold
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		io.WriteString(w, big)
	}), func(c *config.Config) {
		fastlyLimits(c)
		c.Compute.MaxRuntime = config.Duration{Duration: 500 * time.Millisecond}
		c.Server.WriteTimeout = config.Duration{Duration: time.Minute}
	})
	req, _ := http.NewRequest(http.MethodGet, e.front.URL+"/big.bin", nil)
	req.Host = testDomain
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // read nothing: the client has stalled
	// accessLine waits 5 s; write_timeout alone would hold the copy a minute.
	if line := e.accessLine(t, 1); line["reason"] != reasonRuntimeLimit.String() || line["outcome"] != outcomeAborted {
		t.Errorf("access line reason %v outcome %v; want compute_runtime_limit, aborted", line["reason"], line["outcome"])
	}
}
