package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/family"
	bodypipe "github.com/ssatd/ssatd/internal/pipeline"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

const (
	// The page's buffers (bodypipe.RewriteBufSize, OutBufSize): each batch
	// is one hand-off through the pipe to ReverseProxy, whose copy buffer
	// (copyBufSize) takes it in one read.
	rewriteBufSize = bodypipe.RewriteBufSize
	outBufSize     = bodypipe.OutBufSize
	copyBufSize    = 32 << 10
)

// copyBuffers is ReverseProxy's httputil.BufferPool: it copies every body
// to the client, so its buffer is reused rather than allocated per request.
type copyBuffers struct{ pool sync.Pool }

func (c *copyBuffers) Get() []byte {
	if b, ok := c.pool.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, copyBufSize)
}

func (c *copyBuffers) Put(b []byte) { c.pool.Put(&b) }

// modifyResponse classifies the origin response (docs/behaviour.md, "Classification") and, for HTML, puts the
// rewrite pipeline in place of the body. Returning an error sends the client
// a plain-text error through errorHandler: only possible before headers.
func (g *Guest) modifyResponse(resp *http.Response) error {
	req := resp.Request
	x := exchangeOf(req)
	x.status = resp.StatusCode
	// The edge cookie's one call from the page path: Set-Cookie for a
	// new or withdrawn ts-ec, and no x-ts-* identity header without
	// consent (internal/identity, Family.Page). req is the client's
	// request as forwarded, with its cookies and consent headers.
	g.identity.Page(req, resp.Header, x.mintedEC)
	if err := refuseSwitch(resp); err != nil {
		return err
	}
	c := classify(req.Method, resp, g.textTypes)
	if err := c.refusal(); err != nil {
		return err
	}
	rt, coding := c.route, c.coding
	x.route, x.text = rt, c.text
	_, x.originCoding, _ = contentCoding(resp.Header)
	x.outCoding = x.originCoding
	if rt == routeHeadersOnly && x.eligible && resp.StatusCode == http.StatusNotModified {
		// Conditional headers were removed from the request (docs/behaviour.md, "Origin request"), so a 304
		// means the origin broke the contract (docs/behaviour.md, "Errors").
		return &guestError{status: http.StatusBadGateway, reason: reasonOrigin304, msg: "the origin answered 304 Not Modified to an unconditional request"}
	}
	if rt == routePipeline {
		return g.startPipeline(resp, x, coding)
	}
	x.pageSlot.release() // not a page after all: its place is free at once
	if c.why == whyHeadOfPage {
		// A HEAD gets the headers GET would get (RFC 9110 §9.3.2): no
		// length, a weak or no validator, the privacy policy.
		g.setRewrittenHeaders(resp, x, coding)
		return nil
	}
	weakenNotModifiedETag(resp)
	g.passThrough(resp, x, rt)
	return nil
}

// outputCoding is the coding a rewritten page is encoded in: the origin's
// in mirror mode, identity in offload mode, where the edge compresses
// (docs/behaviour.md, "Mirror mode", "Offload mode"). It is the one place
// that decides it.
func outputCoding(m mode, origin compress.Coding) compress.Coding {
	if m == modeOffload {
		return compress.Identity
	}
	return origin
}

// setRewrittenHeaders gives a response the headers of the rewritten page,
// for GET and HEAD alike.
func (g *Guest) setRewrittenHeaders(resp *http.Response, x *exchange, origin compress.Coding) {
	out := outputCoding(x.mode, origin)
	x.outCoding = string(out)
	g.applyRewrittenHeaders(resp.Header, x, out)
	g.readPagePolicy(resp.Header, x)
	resp.ContentLength = -1
}

// passThrough leaves the response as the origin sent it (docs/behaviour.md, "Pass-through responses"), with the
// idle timeout on its body. Offload applies only to HTML on the pipeline
// route (docs/behaviour.md, "Offload mode"), so the exchange falls back to mirror.
func (g *Guest) passThrough(resp *http.Response, x *exchange, rt route) {
	if rt == routeUnsupported {
		g.log.Info("unsupported content-encoding passed through",
			pathField(resp.Request.URL), zap.String("content_encoding", x.originCoding))
	}
	if rt == routePassThrough || rt == routeUnsupported {
		x.passBody = bodypipe.NewBody(resp.Body, 0, g.idleTimeout, func() { x.cancel(errOriginIdle) })
		resp.Body = x.passBody
	}
	x.mode = modeMirror
	if g.diagnostics {
		setDecisionsHeader(resp.Header, x)
	}
}

// startPipeline checks the limits that can be checked before the headers
// go out, sets the final headers and replaces the body with the pipeline.
func (g *Guest) startPipeline(resp *http.Response, x *exchange, coding compress.Coding) error {
	if resp.ContentLength > g.rawLimit {
		// "Limits" in docs/behaviour.md: a declared length above the limit is refused before anything
		// is sent.
		return &guestError{status: http.StatusBadGateway, reason: reasonTooLarge,
			msg: "the origin response is larger than the configured limit",
			log: limitDetail(g.rawLimit, coding, x.mode, resp.ContentLength)}
	}
	// Decoder, rewriter and encoder state exist only inside a page slot
	// (admission.go); the slot is the pipeline's from `go p.run()` on.
	slot := x.pageSlot // an eligible navigation's, taken before the fetch
	if slot == nil {
		var err error
		// What is left of the queue timeout after the early waits.
		if slot, err = g.admitPage(x, g.pages.deadline(x.queued)); err != nil {
			return err
		}
	}
	running := false
	defer func() {
		if !running {
			slot.release() // refused, or panicked, before the pipeline ran
		}
	}()
	pr, pw := io.Pipe()
	p := &pipeline{g: g, x: x, req: resp.Request, out: outputCoding(x.mode, coding), pw: pw, slot: slot, first: newFirstBytes()}
	// Start reads the gzip or zlib header now, so that a corrupt one is a
	// 502 rather than an aborted 200.
	body, err := bodypipe.Start(g.servedJob(x, resp.Body, coding, p.out, pw, p.first.wrote))
	if err != nil {
		return startFailure(x, err)
	}
	p.body = body
	g.setRewrittenHeaders(resp, x, coding)
	if g.diagnostics {
		applyDiagnostics(resp, x, p.out, g.platform, g.canHint)
		p.trailer = resp.Trailer
		p.started = make(chan struct{})
	}
	x.done = make(chan struct{})
	x.pipe = pr
	running = true
	go p.run()
	return p.commit(resp, pr)
}

// startFailure is the answer to a page whose pipeline could not start:
// its body's header is the origin's failure.
func startFailure(x *exchange, err error) error {
	return &guestError{status: http.StatusBadGateway, reason: failureOf(x, err).reason,
		msg: "the origin response could not be decoded", cause: err}
}

// errRawLimit is the raw limit's error, which failureOf reads.
type errRawLimit = bodypipe.RawLimitError

// pageJob is what serving and Transform share of a page's Job: its body,
// codings and body limits, and the rewrite of x's request.
func (g *Guest) pageJob(x *exchange, src io.ReadCloser, in, out compress.Coding) bodypipe.Job {
	job := bodypipe.Job{
		Src: src, In: in, Out: out, Encoders: g.encoders,
		Limits: bodypipe.Limits{Raw: g.rawLimit, Decoded: g.decodedLimit},
		Rewrite: bodypipe.Rewrite{
			Kind:          x.text,
			OriginHost:    g.originHost,
			RequestHost:   x.view.host,
			RequestScheme: x.view.scheme,
			Inline:        g.inline,
			Head:          func() []byte { return g.headPrepend(x) },
		},
		Log: g.log,
	}
	if x.eligible {
		// The page's creatives are inline ones, as upstream's build_bid_map
		// renders them (creatives.process).
		job.Bids = func() map[string]ssat.Bid { return g.creatives.process(awaitBids(x), family.RenderInline, x.view) }
	}
	return job
}

// servedJob is a served page's Job: pageJob with the origin's idle
// timeout, the page's CPU clock and limit, the page's policies, latency
// flushes, and the pipe to the client.
func (g *Guest) servedJob(x *exchange, src io.ReadCloser, in, out compress.Coding, dst io.Writer, first func()) bodypipe.Job {
	job := g.pageJob(x, src, in, out)
	job.Limits.Idle = g.idleTimeout
	job.OnIdle = func() { x.cancel(errOriginIdle) }
	job.Limits.CPU = g.nativeCPULimit()
	job.MeasureCPU = true
	if x.auction != nil {
		job.AuctionCPU = x.auction
	}
	if g.readsPagePolicy(x) {
		job.Rewrite.CSP = &x.csp // read from the headers before the pipeline runs
	}
	job.Latency = g.flushLatency
	job.Dst, job.OnFirstWrite = dst, first
	return job
}

// awaitBids is a page's injection source: it waits for the auction and
// records how the wait ended.
func awaitBids(x *exchange) map[string]ssat.Bid {
	bids, outcome := x.auction.Wait(x.ctx)
	x.mu.Lock()
	x.auctionOut = outcome
	x.auctionTook = time.Since(x.auctionStart)
	x.mu.Unlock()
	x.diag.won(bids)
	return bids
}

// commit waits until the response may be committed and gives it the
// pipeline's output as its body. The status line is committed only once
// the first body bytes are ready: a page that fails before any (a small
// truncated or corrupt body fails inside the first buffer) still gets a
// 502 with a plain-text error instead of an empty reply
// (docs/behaviour.md, "Errors").
func (p *pipeline) commit(resp *http.Response, pr *io.PipeReader) error {
	<-p.first.ready
	if err := p.first.err; err != nil {
		var ge *guestError
		if errors.As(err, &ge) {
			return ge // decided where it happened (a panic in the pipeline)
		}
		return &guestError{status: http.StatusBadGateway, reason: failureOf(p.x, err).reason,
			msg: "the origin response failed before any of it could be sent", cause: err}
	}
	resp.Body = pr
	if p.started != nil {
		resp.Body = &firstReadSignal{ReadCloser: pr, started: p.started}
	}
	return nil
}

// firstBytes tells commit when the response may be committed: when
// the pipeline first hands bytes to the client side, or when it ends. err
// is set when it failed before that, and is read only after ready.
type firstBytes struct {
	once  sync.Once
	ready chan struct{}
	err   error
}

func newFirstBytes() *firstBytes { return &firstBytes{ready: make(chan struct{})} }

func (f *firstBytes) wrote() { f.once.Do(func() { close(f.ready) }) }

// failed records err if no byte was handed on yet, and reports whether it
// did: the failure is then answered before the headers.
func (f *firstBytes) failed(err error) (early bool) {
	f.once.Do(func() {
		f.err, early = err, true
		close(f.ready)
	})
	return early
}

// pipeline is the adapter between a served page and its body's journey
// (internal/pipeline): it runs the journey in its own goroutine, writing
// into a pipe that ReverseProxy copies to the client, and copies the
// Result into the exchange and the diagnostics.
type pipeline struct {
	g    *Guest
	x    *exchange
	req  *http.Request
	body *bodypipe.Run
	out  compress.Coding
	pw   *io.PipeWriter
	// With diagnostics on, trailer gets the figures known at the end. It
	// is written only after ReverseProxy's first body read (started), by
	// which time ReverseProxy has finished reading the trailer's keys.
	trailer http.Header
	started chan struct{}
	first   *firstBytes
	slot    *pageSlot // the page's place in the pipeline, released when run ends
}

// run is the pipeline of a served response: it feeds the pipe that
// ReverseProxy copies to the client.
func (p *pipeline) run() {
	defer close(p.x.done)
	defer p.slot.release() // before done: a finished request has freed its slot
	defer p.body.Close()
	defer p.recoverPanic()
	res := p.tracedProcess()
	p.record(res)
	if err := servedError(res.Err); err != nil {
		p.fail(err)
		return
	}
	if res.CPUMeasured {
		p.spent(res.CPU)
	}
	p.first.wrote() // an empty page: the end is ready
	if p.x.text == textHTML {
		// A text response has no head, and the origin host metric counts pages.
		p.notePage(res.Stats)
	}
	if p.trailer != nil {
		select {
		case <-p.started:
			p.setTrailers(res)
		case <-p.x.ctx.Done():
		}
	}
	p.pw.Close()
}

// servedError is the journey's error as serving answers it: a page over
// its CPU limit ends as Fastly ends a sandbox (computelimits.go).
func servedError(err error) error {
	if errors.Is(err, bodypipe.ErrCPULimit) {
		return errCPULimit
	}
	return err
}

// fail ends a page that failed: before any byte was sent, startPipeline
// answers with an error; after, the response is aborted.
func (p *pipeline) fail(err error) {
	if p.first.failed(err) {
		p.pw.CloseWithError(err)
		return
	}
	reason := failureOf(p.x, err).reason
	p.g.recordFailure(p.x, outcomeAborted, reason, err)
	// The reader side sees the error, ReverseProxy aborts the response
	// (http.ErrAbortHandler): a truncated page never ends cleanly
	// (docs/behaviour.md, "Limits"). A client that left is reported as
	// context.Canceled, the one read error ReverseProxy does not log as
	// a failure of the upstream.
	if reason == reasonClientGone {
		err = context.Canceled
	}
	p.pw.CloseWithError(err)
}

// record copies the journey's figures into the exchange, for the access
// line.
func (p *pipeline) record(res bodypipe.Result) {
	p.x.mu.Lock()
	defer p.x.mu.Unlock()
	p.x.originBytes = res.InBytes
	p.x.outBytes = res.OutBytes
	p.x.processedBytes = res.ProcessedBytes
	p.x.guestTime = res.GuestTime
}

// setTrailers fills the diagnostics trailers of a page served complete.
func (p *pipeline) setTrailers(res bodypipe.Result) {
	t := p.trailer
	t.Set(DiagProcessedBytes, strconv.FormatInt(res.ProcessedBytes, 10))
	t.Set(DiagProcessingMillis, strconv.FormatFloat(millis(res.GuestTime), 'f', 3, 64))
	if res.CPUMeasured {
		t.Set(DiagGuestCPUMillis, strconv.FormatFloat(millis(p.g.platformCPU(res.CPU)), 'f', 3, 64))
	}
	p.g.setTSTrailers(t, res)
	p.x.mu.Lock()
	d := decisionsTrailer(p.x) // the auction's outcome, written at </body>
	p.x.mu.Unlock()
	t.Set(DiagDecisions, d)
}

// notePage logs what a page's rewrite left out, and counts a page that
// never named the origin.
func (p *pipeline) notePage(st rewrite.Stats) {
	if c := st.Cap(); c != "" {
		// docs/behaviour.md, "SSAT injection": past a cap the scanner no
		// longer knows where it is in the page.
		p.g.metrics.PagePastCap(c)
		p.g.log.Info("page copied as is from a tag the rewriter cannot follow, nothing rewritten after it",
			pathField(p.req.URL), zap.String("cap", c))
	}
	if why := st.BidsLeftOut(); why != "" {
		p.g.metrics.BidsNotInjected(why)
		msg := "bids script not injected: the page ends inside <" + st.BodyEndSkipped + ">"
		if st.Cap() != "" {
			msg = "bids script not injected: the last place the rewriter could follow is inside <" + st.BodyEndSkipped + ">"
		}
		p.g.log.Info(msg, pathField(p.req.URL), zap.String("reason", why))
	}
	if !st.HeadFound {
		p.g.log.Info("no <head> start tag: nothing injected", pathField(p.req.URL))
	}
	p.g.noteOriginHost(p.req, st)
	p.g.notePolicy(p.req.URL.Path, &st)
}

// firstReadSignal closes started on the first Read.
type firstReadSignal struct {
	io.ReadCloser
	started chan struct{}
	once    sync.Once
}

func (f *firstReadSignal) Read(p []byte) (int, error) {
	f.once.Do(func() { close(f.started) })
	return f.ReadCloser.Read(p)
}

// headPrepend is what goes right after <head> (docs/behaviour.md, "Bundle
// tag"), in upstream's order (crates/trusted-server-core/src/
// html_processor.rs:409-451): the ad-slots script for eligible requests,
// then the head tags (headTags: integrations' head inserts, the bundle
// tag, the deferred modules' tags).
// The script depends only on which configured slots matched, so it is
// encoded once per slot set (headScripts) rather than once per page.
func (g *Guest) headPrepend(x *exchange) []byte {
	if !x.eligible {
		return g.headTags
	}
	key := slotSetKey(x.slots)
	if s, ok := g.headScripts.Load(key); ok {
		return s.([]byte)
	}
	s, err := rewrite.AdSlotsScript(x.slots)
	if err != nil {
		g.log.Error("encode ad slots", zap.Error(err))
		return g.headTags
	}
	s = append(s, g.headTags...)
	if g.headScriptsN.Add(1) <= maxHeadScripts {
		g.headScripts.Store(key, s)
	}
	return s
}

// maxHeadScripts bounds headScripts: slot sets come from the configured
// path patterns, a handful in practice; past the bound a set is encoded
// per page, as without the cache.
const maxHeadScripts = 256

// slotSetKey names a set of matched slots by their configured IDs, which
// config validation keeps unique.
func slotSetKey(slots []ssat.Slot) string {
	var b strings.Builder
	for _, s := range slots {
		b.WriteString(s.ID)
		b.WriteByte(0)
	}
	return b.String()
}

func limitDetail(limit int64, c compress.Coding, m mode, declared int64) []zap.Field {
	f := []zap.Field{zap.Int64("limit_bytes", limit), zap.String("origin_coding", string(c)), zap.String("mode", string(m))}
	if declared >= 0 {
		f = append(f, zap.String("content_length", strconv.FormatInt(declared, 10)))
	}
	return f
}

// noteOriginHost counts, and logs at debug level, a whole page in which no
// URL named the origin host, so no link was pointed at the client-facing
// host (docs/behaviour.md, "URL rewriting"). Pages with relative links only
// are counted too; what stands out is a site where every page is, which
// usually means its links name the origin by another host (localhost:8000
// against an origin_url of http://127.0.0.1:8000).
func (g *Guest) noteOriginHost(r *http.Request, st rewrite.Stats) {
	if st.URLsRewritten > 0 || st.InlineRewritten > 0 || st.Cap() != "" {
		return
	}
	g.metrics.PageWithoutOriginHost()
	g.log.Debug("page never named the origin host: no URL was rewritten",
		pathField(r.URL), zap.String("origin_host", g.originHost))
}
