package config

import (
	"fmt"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// Go has no per-request heap to measure or cap, so ssatd cannot emulate
// Fastly's 128 MB heap per execution. What it can do is bound what one
// page holds at its worst: the body streams through the pipeline, so the
// page size, publisher.max_origin_response_bytes and
// publisher.max_decoded_body_bytes bound bytes that pass, not bytes held.
// What is held is each codec's window and state, the rewriter's token
// buffer, the pipeline's buffers and the auction's answers, which are
// read whole. PageHeapBound adds those up (docs/behaviour.md, "Fidelity").

// PipelineBufferBytes are the pipeline's own buffers per page: the
// rewriter's batch, the encoder's output batch and the copy buffer to the
// client (internal/pipeline's RewriteBufSize and OutBufSize, and
// internal/proxy's copy buffer; a test there keeps the two equal).
const PipelineBufferBytes = (32 + 16 + 32) << 10

const (
	// transportBufferBytes are net/http's read and write buffers of the
	// origin connection.
	transportBufferBytes = 8 << 10
	// brotliDecoderBytes: a brotli stream may declare a window of up to
	// 2^24 bytes (RFC 7932 §9.1), which the decoder's ring buffer holds,
	// plus its tables. The origin chooses the window, not ssatd.
	brotliDecoderBytes = 1<<24 + 64<<10
	// gzipDecoderBytes: a 32 KiB window (RFC 1951) plus Huffman tables
	// and the bufio reader.
	gzipDecoderBytes = 96 << 10
	// auctionAnswerFactor: an endpoint's answer is read whole, up to
	// auction.DefaultMaxBody, then decoded; the decoded bids are taken as
	// no larger than the bytes again.
	auctionAnswerFactor = 2
)

// HeapBound is the most heap one page can hold, by part, in bytes.
type HeapBound struct {
	Codecs    int64 // the origin decoder and the output encoder, worst coding
	TagBuffer int64 // the rewriter's token buffer and its read buffer
	Buffers   int64 // the pipeline's and the origin transport's buffers
	Auction   int64 // the bid answers, read whole
}

// Total is the sum of the parts.
func (b HeapBound) Total() int64 { return b.Codecs + b.TagBuffer + b.Buffers + b.Auction }

func (b HeapBound) String() string {
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	return fmt.Sprintf("codecs %s, tag buffer %s, buffers %s, auction answers %s",
		mib(b.Codecs), mib(b.TagBuffer), mib(b.Buffers), mib(b.Auction))
}

// PageHeapBound is the worst case one page can hold under this
// configuration. The guest mirrors the origin's coding, so the worst
// coding is a brotli page re-encoded at compression.brotli_quality and
// compression.brotli_window, or a gzip page at compression.gzip_level.
func (c *Config) PageHeapBound() HeapBound {
	codecs := max(brotliDecoderBytes+BrotliEncoderBytes(c.Compression.BrotliQuality, c.Compression.BrotliWindow),
		gzipDecoderBytes+GzipEncoderBytes(c.Compression.GzipLevel))
	b := HeapBound{
		Codecs:    codecs,
		TagBuffer: 2*rewrite.DefaultMaxTokenBytes + 32<<10,
		Buffers:   PipelineBufferBytes + transportBufferBytes,
	}
	if c.Auction.Enabled && c.Auction.Provider == AuctionProviderOpenRTB {
		b.Auction = int64(len(c.Auction.OpenRTB)) * auctionAnswerFactor * auction.DefaultMaxBody
	}
	return b
}

// BrotliEncoderBytes bounds the live state of the brotli encoder at
// quality q and window 2^w: its ring buffer and hash tables. The figures
// are upper bounds of heap measured after GC while andybalholm/brotli
// encoded 3 MiB of HTML-like text (docs/behaviour.md, "Fidelity"); the
// quality-10 and -11 (Zopfli) path keeps a binary tree of 2 × 2^w
// four-byte entries on top. Measured: q4 and q9 at w24 24.7 MiB (bound
// 30), q10 at w22 30.3 MiB (bound 46) and at w24 120.3 MiB (bound 166).
func BrotliEncoderBytes(q, w int) int64 {
	win := int64(1) << w
	switch {
	case q <= 1:
		return win + 1<<20
	case q <= 9:
		return win*3/2 + 6<<20
	}
	return win*10 + 6<<20
}

// GzipEncoderBytes bounds the live state of the gzip encoder at level l
// (klauspost/compress): window, hash chains and token buffer, measured
// like BrotliEncoderBytes at 0.32 MiB for level 9, the largest.
func GzipEncoderBytes(int) int64 {
	return 2 << 20
}
