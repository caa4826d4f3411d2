package compress

import (
	"fmt"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// Range is an inclusive range of valid values of one encoder setting. The
// configuration and the edge ask these rather than keep their own bounds,
// so that a value accepted at startup is one the encoders take.
type Range struct{ Min, Max int }

// Contains reports whether v is in r.
func (r Range) Contains(v int) bool { return v >= r.Min && v <= r.Max }

// Check returns an error naming what (the setting) when v is out of r.
func (r Range) Check(what string, v int) error {
	if !r.Contains(v) {
		return fmt.Errorf("%s %d out of range [%d, %d]", what, v, r.Min, r.Max)
	}
	return nil
}

var (
	// GzipLevels are the gzip and deflate levels a deployment configures,
	// fastest to smallest.
	GzipLevels = Range{Min: gzip.BestSpeed, Max: gzip.BestCompression}
	// BrotliQualities are the brotli qualities, fastest to smallest.
	BrotliQualities = Range{Min: brotli.BestSpeed, Max: brotli.BestCompression}
	// BrotliWindows are the brotli window sizes, as log2 of bytes.
	BrotliWindows = Range{Min: 10, Max: 24}

	// encoderGzipLevels is what NewWriter takes: GzipLevels plus the
	// library's special levels below them (0 stores, -1 is the default,
	// -2 is Huffman only), which tools and tests use. Stateless gzip (-3)
	// is excluded: it cannot sync-flush.
	encoderGzipLevels = Range{Min: gzip.HuffmanOnly, Max: GzipLevels.Max}
)
