package pipeline

import (
	"errors"
	"io"
	"runtime"
	"time"

	"github.com/ssatd/ssatd/internal/cputime"
)

// CPUSource is CPU spent for a page outside its pipeline goroutine: its
// auction's (auction.Call.CPU), read atomically from any goroutine.
type CPUSource interface {
	CPU() (time.Duration, bool)
}

// pageCPU is the guest CPU of one page (Job.MeasureCPU): the thread CPU
// clock (cputime.Thread) of the goroutine that runs Process, read only
// while the page computes. The goroutine holds its OS thread
// (runtime.LockOSThread) for one stretch of work and gives it up before
// every wait: for the origin body (originBody.Read), for the client
// (countWriter.Write into Dst, serving's pipe) and for the bids (Job.Bids,
// at BodyEnd). A page waiting on a slow client or origin then holds no
// thread, and its wake-up is an ordinary goroutine wake-up rather than a
// hand-off to its own sleeping thread. What a wait costs in the kernel
// (the read of the origin socket) is I/O, not guest work, and is left
// out, as `ssatd measure` leaves it out.
//
// The page's CPU also counts its auction's (Job.AuctionCPU): the sections
// in which the auction's own goroutines compute (auction.Call.CPU:
// building and encoding the bid requests, decoding the answers, choosing
// the winners), as all of that runs in the guest on Fastly and counts
// toward its vCPU time. total and end add what those sections have spent
// by then.
//
// Only the pipeline goroutine calls its methods, with one exception kept
// under the latency writer's lock: foreign, set while the latency timer's
// goroutine flushes, tells countWriter that the write is not the
// pipeline's, whose clock it must then leave alone.
type pageCPU struct {
	spent   time.Duration // the stretches already ended
	start   time.Duration // the clock when the running stretch began
	running bool
	ok      bool // every reading succeeded
	foreign bool // guarded by latencyWriter.mu
	// auction is the page's auction, nil without one; its CPU is read
	// atomically, from any goroutine.
	auction CPUSource
}

// begin starts the first stretch.
func (c *pageCPU) begin() {
	c.ok = true
	c.resume()
}

// resume starts a stretch after a wait. Callers resume only where pause
// reported a running stretch, so a wait before begin (the decoder's header
// read in Start, on serving's handler goroutine) leaves the clock alone.
func (c *pageCPU) resume() {
	if c == nil || !c.ok || c.running {
		return
	}
	runtime.LockOSThread()
	t, ok := cputime.Thread()
	c.start, c.running, c.ok = t, true, ok
	if !ok {
		c.running = false
		runtime.UnlockOSThread()
	}
}

// pause ends the running stretch before a wait, and reports whether one
// was running (and so whether resume has a stretch to start again).
func (c *pageCPU) pause() bool {
	if c == nil || !c.running {
		return false
	}
	t, ok := cputime.Thread()
	c.spent += t - c.start
	c.ok = c.ok && ok
	c.running = false
	runtime.UnlockOSThread()
	return true
}

// total is the CPU spent so far, the running stretch and the auction's
// included.
func (c *pageCPU) total() (time.Duration, bool) {
	spent, ok := c.spent, c.ok
	if c.running {
		t, tok := cputime.Thread()
		spent, ok = spent+t-c.start, ok && tok
	}
	return c.withAuction(spent, ok)
}

// end ends the last stretch and returns the page's CPU, the auction's
// included.
func (c *pageCPU) end() (time.Duration, bool) {
	c.pause()
	return c.withAuction(c.spent, c.ok)
}

func (c *pageCPU) withAuction(spent time.Duration, ok bool) (time.Duration, bool) {
	if c.auction == nil {
		return spent, ok
	}
	a, aok := c.auction.CPU()
	return spent + a, ok && aok
}

// during runs wait with the clock paused.
func (c *pageCPU) during(wait func()) {
	if c.pause() {
		defer c.resume()
	}
	wait()
}

// ErrCPULimit ends a page whose guest CPU passed Limits.CPU.
var ErrCPULimit = errors.New("the page used more CPU than its limit")

// cpuMeter ends a page whose guest CPU passes compute.cpu_limit_ms. It
// wraps the decoded origin body, which the pipeline reads while its CPU
// clock runs (pageCPU): every read reads the clock, so a page is ended
// within one read buffer (32 KiB of HTML) of the limit. A page that passes
// it ends with ErrCPULimit, which serving answers as Fastly ends a sandbox
// over its CPU limit: before the response headers with a 503, after them
// with an aborted response.
type cpuMeter struct {
	r     io.Reader
	clock *pageCPU
	limit time.Duration // native CPU: compute.cpu_limit_ms / compute.cpu_scale
}

func (m *cpuMeter) Read(p []byte) (int, error) {
	if m.over() {
		return 0, ErrCPULimit
	}
	return m.r.Read(p)
}

func (m *cpuMeter) over() bool {
	spent, ok := m.clock.total()
	return ok && spent > m.limit
}

// meteredBody is the decoded origin body read through a cpuMeter.
type meteredBody struct {
	*cpuMeter
	io.Closer
}
