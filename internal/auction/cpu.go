package auction

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ssatd/ssatd/internal/cputime"
)

// cpuAccount is the guest CPU of one auction's own goroutines: building
// and encoding the bid requests, decoding the answers, choosing the
// winners. On Fastly all of that runs in Trusted Server's guest, between
// its waits on the network (crates/trusted-server-core/src/auction/orchestrator.rs:
// provider.request_bids, then select() and parse_response_with_context_and_state,
// then select_winning_bids), and so counts toward the instance's vCPU
// time, which "does not include time spent performing any I/O operations"
// (https://www.fastly.com/documentation/reference/compute/sdks/rust/fastly/compute_runtime/fn.elapsed_vcpu_ms/)
// and is limited per execution (https://docs.fastly.com/products/compute-resource-limits).
// Each section that computes is timed with the clock the page's rewrite
// uses (cputime.Thread, the OS thread held for the section); sending,
// waiting for and reading an answer are not sections.
// Every endpoint call ends at the auction's deadline, as Trusted Server
// stops selecting answers at its own, so no answer is decoded after it.
type cpuAccount struct {
	ns     atomic.Int64
	failed atomic.Bool // a reading of the clock failed
}

type cpuKey struct{}

// withCPU returns a context under which the provider's sections add to a.
func withCPU(ctx context.Context, a *cpuAccount) context.Context {
	return context.WithValue(ctx, cpuKey{}, a)
}

// computing runs f, which must not wait on the network, as one section
// of the auction's CPU in ctx (none outside Start: f just runs).
func computing(ctx context.Context, f func()) {
	a, _ := ctx.Value(cpuKey{}).(*cpuAccount)
	if a == nil {
		f()
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok0 := cputime.Thread()
	f()
	t1, ok1 := cputime.Thread()
	if !ok0 || !ok1 {
		a.failed.Store(true)
		return
	}
	a.ns.Add(int64(t1 - t0))
}

// CPU is the thread CPU the auction's sections have spent for the page so
// far (cpuAccount); ok is false where the clock could not be read. An
// in-memory provider (None, Static) answers in Start and spends none here.
func (c *Call) CPU() (d time.Duration, ok bool) {
	if c == nil {
		return 0, true
	}
	return time.Duration(c.cpu.ns.Load()), !c.cpu.failed.Load()
}
