// Package edge is the stand-in for Fastly's dynamic compression (docs/behaviour.md, "Edge"):
// middleware in front of the guest that compresses the responses carrying
// X-Compress-Hint and removes the hint from everything it lets through.
//
// The coding is chosen once per response, when the guest writes its final
// header (decide), as Caddy's encode handler does; one writer then streams
// the body through a pooled encoder of that coding (gzip and br from
// internal/compress, zstd from klauspost/compress). Responses without the
// hint pass through untouched, Vary included.
package edge

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Options configure the edge. They are checked once, by New, against the
// ranges package compress owns.
type Options struct {
	GzipLevel     int  // compress.GzipLevels
	BrotliQuality int  // compress.BrotliQualities
	BrotliWindow  int  // compress.BrotliWindows; 0 means 22
	MinSize       int  // smallest body compressed, bytes; 0 compresses all
	Zstd          bool // answer zstd to clients that accept it and not br
}

// FromConfig wraps next in the edge the [delivery] section describes. It is
// the one translation of that section into Options, used by the daemon,
// measure, the load tool and the tests alike.
func FromConfig(next http.Handler, d config.DeliveryConfig) (*Edge, error) {
	return New(next, Options{
		GzipLevel:     d.GzipLevel,
		BrotliQuality: d.BrotliQuality,
		MinSize:       d.MinSize,
		Zstd:          d.Zstd,
	})
}

// Edge is the delivery compression middleware.
type Edge struct {
	next    http.Handler
	codecs  compress.Encoders // checked once, in New
	minSize int
	zstd    bool
}

// New wraps next. It validates o here, once, so that starting an encoder
// on a response cannot fail for a setting.
func New(next http.Handler, o Options) (*Edge, error) {
	if o.BrotliWindow == 0 {
		o.BrotliWindow = 22
	}
	var errs []error
	for _, c := range []struct {
		r    compress.Range
		what string
		v    int
	}{
		{compress.GzipLevels, "gzip level", o.GzipLevel},
		{compress.BrotliQualities, "brotli quality", o.BrotliQuality},
		{compress.BrotliWindows, "brotli window", o.BrotliWindow},
	} {
		if err := c.r.Check(c.what, c.v); err != nil {
			errs = append(errs, fmt.Errorf("edge: %w", err))
		}
	}
	if o.MinSize < 0 {
		errs = append(errs, fmt.Errorf("edge: min size %d is negative", o.MinSize))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	codecs, err := compress.NewEncoders(compress.Options{GzipLevel: o.GzipLevel, BrotliQuality: o.BrotliQuality, BrotliWindow: o.BrotliWindow})
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	return &Edge{
		next:    next,
		codecs:  codecs,
		minSize: o.MinSize,
		zstd:    o.Zstd,
	}, nil
}

func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := &ssat.Delivery{}
	span := startSpan(r.Context())
	ew := &writer{
		ResponseWriter: w,
		e:              e,
		ae:             compress.ParseAcceptEncoding(r.Header.Values("Accept-Encoding")),
		method:         r.Method,
	}
	ew.out.w = w
	ew.out.fail = ew.fail
	completed := false
	defer func() {
		// Finish the stream only for a handler that returned normally:
		// after a panic (an aborted response) it must stay unfinished so
		// that no decoder can take it for a whole body.
		if completed {
			ew.fail(ew.close())
		} else {
			ew.abandon()
		}
		ew.report(d)
		endSpan(span, d)
		d.Finish()
		if completed && d.Err != nil {
			// A response the client did not receive whole is aborted like
			// any other: net/http then never writes the end of the body.
			panic(http.ErrAbortHandler)
		}
	}()
	e.next.ServeHTTP(ew, r.WithContext(ssat.WithDelivery(r.Context(), d)))
	completed = true
}
