package proxy

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	bodypipe "github.com/ssatd/ssatd/internal/pipeline"
)

// TransformStats describe one Transform.
type TransformStats struct {
	Eligible       bool
	HeadFound      bool
	ProcessedBytes int64         // rewritten bytes before encoding
	OutBytes       int64         // bytes written to dst
	GuestTime      time.Duration // wall time of the pipeline, auction wait excluded
}

// Transform runs the guest's body pipeline on one page without HTTP: it
// decodes src as coding in, rewrites it for request r exactly as ServeHTTP
// would (eligibility, slots, auction, host and scheme), and writes it to dst
// encoded as out. Benchmarks and `ssatd measure` use it so that what they
// time is the code that serves traffic: the page's Job (pageJob) run by
// internal/pipeline, as serving runs it. It applies serving's body limits:
// src is read through the origin body reader with
// publisher.max_origin_response_bytes, and decoded under
// publisher.max_decoded_body_bytes, so a page that serving would refuse or
// abort fails here with the same error.
//
// It differs from serving in three named ways (docs/decisions.md, entry
// 14); none changes the page a client decodes:
//   - No page place: the page gate (admission.go) bounds how many pages are
//     in the pipeline at once and costs a page only its wait, which is not
//     guest work. A caller that runs Transform concurrently bounds itself.
//   - No latency flushes (Job.Latency 0): with no client waiting, the
//     output is the same bytes on a slow machine; in serving, a slow origin
//     adds a few timer flushes and a little encoder work that Transform
//     does not do. Nor an idle timer (src is not an origin that can stall),
//     a CPU clock or its limit: the caller times the call.
//   - The caller names the output coding (out), where serving derives it
//     from the mode (outputCoding), so that one page can be measured in
//     every mode.
func (g *Guest) Transform(dst io.Writer, src io.Reader, in, out compress.Coding, r *http.Request) (TransformStats, error) {
	// The encoders' Writer takes only the codings it encodes.
	if c, ok := compress.ParseContentEncoding(string(out)); !ok || c != out {
		return TransformStats{}, fmt.Errorf("proxy: transform: no encoder for coding %q", out)
	}
	x := &exchange{prepared: prepared{start: time.Now(), view: g.hosts.view(r)}}
	g.startAuction(x, r, g.prepare(x, r))
	defer func() {
		x.cancel(errRequestDone)
		if x.auction != nil {
			x.auction.Stop()
		}
	}()
	job := g.pageJob(x, io.NopCloser(src), in, out)
	job.Dst = dst
	run, err := bodypipe.Start(job)
	if err != nil {
		return TransformStats{}, err
	}
	res := run.Process()
	return TransformStats{
		Eligible:       x.eligible,
		HeadFound:      res.Stats.HeadFound,
		ProcessedBytes: res.ProcessedBytes,
		OutBytes:       res.OutBytes,
		GuestTime:      res.GuestTime,
	}, res.Err
}
