// Package pipeline is a body's journey through the guest: the origin's
// bytes decoded, rewritten and encoded again, under the body limits
// (docs/behaviour.md, "Limits"), with the latency flushes that let a
// browser start on the head early, and with the page's guest CPU
// accounted (docs/measuring.md). A Job names everything the journey needs
// and a Result everything it came to. The package knows no HTTP exchange:
// serving (internal/proxy) runs it behind a thin adapter that copies the
// Result into the exchange, and the offline path (proxy.Guest.Transform,
// used by `ssatd measure` and the benchmarks) runs the same code.
package pipeline

import (
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/csp"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Kind is which rules rewrite a body: the HTML rewrite (the zero value),
// or the text rules of docs/behaviour.md, "Text responses".
type Kind uint8

const (
	HTML   Kind = iota
	Text        // CSS, JSON, XML and other text: bare hosts at host-name boundaries
	Script      // JavaScript: bare hosts only in string literals
	Flight      // React Server Components: Text's rules, row by row
)

// Limits bound one body (docs/behaviour.md, "Limits").
type Limits struct {
	Raw     int64         // body bytes as sent, any coding; 0: none
	Decoded int64         // body bytes after decoding (compress.NewReader's limit)
	Idle    time.Duration // the longest one read of Src may wait (with Job.OnIdle); 0: any
	// CPU is the native guest CPU that ends the page with ErrCPULimit
	// (compute.cpu_limit_ms in this machine's CPU); 0: none. It needs
	// Job.MeasureCPU.
	CPU time.Duration
}

// Rewrite is what the rewriter needs of the request and the page.
type Rewrite struct {
	Kind          Kind
	OriginHost    string
	RequestHost   string
	RequestScheme string
	Inline        bool      // rewrite.Options.Inline
	CSP           *csp.Page // the page's policies as its header set them; nil: CSP rules off
	// Head, for HTML, is what goes right after <head> (rewrite.Options.
	// HeadPrepend). It is called on the page's clocks: what it computes
	// is guest work.
	Head func() []byte
}

// Job is one body's journey: its inputs.
type Job struct {
	Src      io.ReadCloser   // the body as the origin sends it
	In, Out  compress.Coding // Src's coding, and the coding written to Dst
	Encoders compress.Encoders
	Limits   Limits
	// OnIdle is called when one read of Src waits longer than
	// Limits.Idle: serving cancels the origin request with the idle
	// timeout's cause. Nil: no idle timer.
	OnIdle  func()
	Rewrite Rewrite
	// Bids, when set, is the injection source: called once, at the page's
	// </body> (rewrite.Options.BodyEnd), it waits for the bids the page
	// gets. The wait is not guest work: it is left out of the guest time
	// and, with the clock paused, out of the CPU.
	Bids func() map[string]ssat.Bid
	// Latency bounds how long rewritten bytes wait in the buffers before
	// they are flushed to Dst (latencyWriter). 0: no timer flushes, so
	// the output and the CPU spent do not depend on timing, as an offline
	// run (no client waiting) wants.
	Latency time.Duration
	// Now is the wall clock of Result.GuestTime; nil: time.Now.
	Now func() time.Time
	// MeasureCPU takes the page's guest CPU with the thread clock
	// (pageCPU), AuctionCPU's included when set.
	MeasureCPU bool
	AuctionCPU CPUSource
	// Dst gets the encoded output; OnFirstWrite, when set, is called just
	// before the first bytes are written to it.
	Dst          io.Writer
	OnFirstWrite func()
	Log          *zap.Logger // nil: no log
}

// Result is what a Job came to.
type Result struct {
	Stats          rewrite.Stats
	In, Out        compress.Coding
	InBytes        int64         // raw bytes read from Src
	ProcessedBytes int64         // rewritten bytes before encoding
	OutBytes       int64         // encoded bytes written to Dst
	GuestTime      time.Duration // wall time of the journey, the bids' wait excluded
	CPU            time.Duration // native guest CPU, with MeasureCPU
	CPUMeasured    bool          // CPU was read: MeasureCPU, and the clock worked
	// Err is why the journey failed, nil when the page is complete. The
	// caller names the reason (proxy's failureOf): a *RawLimitError, a
	// *compress.DecodeError, ErrCPULimit, an error of Dst wrapped with
	// rewrite.ErrWrite, or Src's read error. On failure the encoded
	// stream is left unfinished, so it can never decode as complete.
	Err error
}

// Do runs job from start to end: Start, Process and Close.
func Do(job Job) (Result, error) {
	r, err := Start(job)
	if err != nil {
		return Result{In: job.In, Out: job.Out}, err
	}
	res := r.Process()
	r.Close()
	return res, res.Err
}
