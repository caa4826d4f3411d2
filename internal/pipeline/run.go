package pipeline

import (
	"bufio"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

const (
	// RewriteBufSize batches the rewriter's many small writes before the
	// encoder; OutBufSize batches the encoder's output before Dst. Serving
	// hands each batch through a pipe to ReverseProxy, whose copy buffer
	// takes it in one read (config.PipelineBufferBytes counts them).
	RewriteBufSize = 32 << 10
	OutBufSize     = 16 << 10
)

// The buffers are pooled: a page in flight holds them, a page done
// returns them, so a busy daemon does not allocate them per page.
var (
	frontPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, RewriteBufSize) }}
	outPool   = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, OutBufSize) }}
)

func getBufWriter(pool *sync.Pool, w io.Writer) *bufio.Writer {
	b := pool.Get().(*bufio.Writer)
	b.Reset(w)
	return b
}

func putBufWriter(pool *sync.Pool, b *bufio.Writer) {
	if b != nil {
		b.Reset(nil)
		pool.Put(b)
	}
}

// Run is a started Job: its decoder, encoder and buffers. Process runs
// it, in one goroutine, once.
type Run struct {
	job   Job
	body  *originBody
	dec   io.ReadCloser
	sent  *countWriter
	out   *bufio.Writer // nil for identity output
	enc   compress.Writer
	front *latencyWriter
	cpu   *pageCPU // nil without MeasureCPU
}

// Start reads Src's gzip or zlib header, so that a corrupt one fails
// before any response header is sent, and sets up the encoder. On error
// Src is closed and nothing is left open.
func Start(job Job) (*Run, error) {
	r := &Run{job: job}
	if job.MeasureCPU {
		r.cpu = &pageCPU{}
	}
	r.body = &originBody{rc: job.Src, limit: job.Limits.Raw, idle: job.Limits.Idle, onIdle: job.OnIdle, cpu: r.cpu}
	dec, err := compress.NewReader(job.In, r.body, job.Limits.Decoded)
	if err != nil {
		r.body.Close()
		return nil, err
	}
	r.dec = dec
	r.open()
	return r, nil
}

// open sets up the writers: front buffer, encoder, output buffer, Dst.
// It cannot fail: the encoders' settings were checked when they were
// built (compress.NewEncoders).
func (r *Run) open() {
	r.sent = &countWriter{w: r.job.Dst, first: r.job.OnFirstWrite, cpu: r.cpu}
	// An encoder writes its output in small pieces, which out batches;
	// identity output is the front buffer's batches already.
	var encDst io.Writer = r.sent
	if r.job.Out != compress.Identity {
		r.out = getBufWriter(&outPool, r.sent)
		encDst = r.out
	}
	enc := r.job.Encoders.Writer(r.job.Out, encDst)
	r.enc = enc
	r.front = newLatencyWriter(getBufWriter(&frontPool, enc), enc, r.out, r.job.Latency)
	r.front.cpu = r.cpu
}

// releaseBuffers returns the buffers once nothing writes to them: the
// latency writer is closed or abandoned, so its timer does not touch them
// either.
func (r *Run) releaseBuffers() {
	putBufWriter(&frontPool, r.front.front)
	putBufWriter(&outPool, r.out)
	r.front.front, r.front.out, r.out = nil, nil, nil
}

// Abandon stops the output without finishing the encoded stream: for a
// caller whose Process panicked.
func (r *Run) Abandon() { r.front.Abandon() }

// Close closes Src.
func (r *Run) Close() error { return r.body.Close() }

// InBytes is the raw bytes read from Src so far.
func (r *Run) InBytes() int64 { return r.body.Count() }

// Process decodes, rewrites and encodes the whole body, with the guest CPU
// taken (MeasureCPU) only while the page computes, so that the page holds
// an OS thread only then.
func (r *Run) Process() Result {
	res := Result{In: r.job.In, Out: r.job.Out}
	clock, limit := r.cpu, r.job.Limits.CPU
	if clock == nil {
		res.Err = r.process(&res)
		return res
	}
	clock.auction = r.job.AuctionCPU
	clock.begin()
	defer clock.end() // a panic in process leaves no thread locked
	if limit > 0 && clock.ok {
		r.dec = meteredBody{cpuMeter: &cpuMeter{r: r.dec, clock: clock, limit: limit}, Closer: r.dec}
	}
	err := r.process(&res)
	res.CPU, res.CPUMeasured = clock.end()
	if err == nil && limit > 0 && res.CPUMeasured && res.CPU > limit {
		// The last read was under the limit, the end of the page (the
		// encoder's final block) went over it.
		err = ErrCPULimit
	}
	res.Err = err
	return res
}

// process is Process without the clock. On failure the encoded stream is
// left unfinished, so it can never decode as complete.
func (r *Run) process(res *Result) error {
	defer r.dec.Close()
	start := r.now()
	var wait time.Duration // waiting for the bids is not guest work
	var err error
	if r.job.Rewrite.Kind != HTML {
		res.Stats, err = r.rewriteText()
	} else {
		res.Stats, err = rewrite.Rewrite(r.front, r.dec, r.options(&wait))
	}
	if err == nil {
		err = r.front.Close()
	} else {
		r.front.Abandon()
	}
	res.InBytes = r.body.Count()
	res.OutBytes = r.sent.n
	res.ProcessedBytes = r.front.written
	res.GuestTime = r.now().Sub(start) - wait
	r.releaseBuffers()
	return err
}

func (r *Run) now() time.Time {
	if r.job.Now != nil {
		return r.job.Now()
	}
	return time.Now()
}

// options are the HTML rewrite's; the bids' wait is added to wait.
func (r *Run) options(wait *time.Duration) *rewrite.Options {
	rw := r.job.Rewrite
	opts := &rewrite.Options{
		OriginHost:    rw.OriginHost,
		RequestHost:   rw.RequestHost,
		RequestScheme: rw.RequestScheme,
		BeforeWait:    r.front.Flush,
		Inline:        rw.Inline,
		CSP:           rw.CSP,
	}
	if rw.Head != nil {
		opts.HeadPrepend = rw.Head()
	}
	if r.job.Bids != nil {
		opts.BodyEnd = func() []byte {
			t := r.now()
			var bids map[string]ssat.Bid
			r.cpu.during(func() { bids = r.job.Bids() })
			*wait += r.now().Sub(t)
			s, err := rewrite.BidsScript(bids)
			if err != nil {
				if r.job.Log != nil {
					r.job.Log.Error("encode bids", zap.Error(err))
				}
				s, _ = rewrite.BidsScript(nil)
			}
			return s
		}
	}
	return opts
}

// rewriteText is the rewrite step for a text response.
func (r *Run) rewriteText() (rewrite.Stats, error) {
	rw := r.job.Rewrite
	opts := &rewrite.TextOptions{
		OriginHost:    rw.OriginHost,
		RequestHost:   rw.RequestHost,
		RequestScheme: rw.RequestScheme,
		Script:        rw.Kind == Script,
	}
	rewriteBody := rewrite.RewriteText
	if rw.Kind == Flight {
		rewriteBody = rewrite.RewriteFlight
	}
	st, err := rewriteBody(r.front, r.dec, opts)
	return rewrite.Stats{URLsRewritten: st.Rewritten, InBytes: st.InBytes, OutBytes: st.OutBytes}, err
}

// countWriter counts the encoded bytes handed to Dst. Its writes wait for
// the client, so the page's CPU clock is paused around them, unless the
// write is the latency timer's (pageCPU.foreign).
type countWriter struct {
	w     io.Writer
	n     int64
	first func() // called before the first bytes are handed on
	cpu   *pageCPU
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.first != nil && len(p) > 0 {
		c.first()
		c.first = nil
	}
	if c.cpu != nil && !c.cpu.foreign && c.cpu.pause() {
		defer c.cpu.resume()
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
