package proxy

import (
	"io"
	"net/http"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
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
// encoded as out. Benchmarks and the measuring tool use it so that what they
// time is the code that serves traffic. With no client waiting there are no
// latency-bound flushes, so the output is the same on a slow machine.
func (g *Guest) Transform(dst io.Writer, src io.Reader, in, out compress.Coding, r *http.Request) (TransformStats, error) {
	x := &exchange{prepared: prepared{start: time.Now(), view: g.hosts.view(r)}}
	g.prepare(x, r)
	defer func() {
		x.cancel(errRequestDone)
		if x.auction != nil {
			x.auction.Stop()
		}
	}()
	dec, err := compress.NewReader(in, src, g.decodedLimit)
	if err != nil {
		return TransformStats{}, err
	}
	p := &pipeline{g: g, x: x, req: r, dec: dec, coding: out, offline: true}
	if err := p.open(dst); err != nil {
		dec.Close()
		return TransformStats{}, err
	}
	st, err := p.process()
	return TransformStats{
		Eligible:       x.eligible,
		HeadFound:      st.HeadFound,
		ProcessedBytes: x.processedBytes,
		OutBytes:       x.outBytes,
		GuestTime:      x.guestTime,
	}, err
}
