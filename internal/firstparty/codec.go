package firstparty

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// readDecoded reads a body to be rewritten, decoded from its
// Content-Encoding (gzip, deflate as zlib, br: streaming_processor.rs:67-74,
// 1057), refusing more than max decoded bytes (MAX_REWRITABLE_BODY_SIZE,
// core/creative.rs:49, 961-965).
func readDecoded(resp *http.Response, max int64) ([]byte, error) {
	var src io.Reader = resp.Body
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("firstparty: gzip body: %w", err)
		}
		defer zr.Close()
		src = zr
	case "deflate":
		zr, err := zlib.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("firstparty: deflate body: %w", err)
		}
		defer zr.Close()
		src = zr
	case "br":
		src = brotli.NewReader(resp.Body)
	}
	b, err := io.ReadAll(io.LimitReader(src, max+1))
	if err != nil {
		return nil, fmt.Errorf("firstparty: read body: %w", err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: over %d bytes to rewrite", errTooLarge, max)
	}
	return b, nil
}

// encodeAs re-encodes a rewritten body in the coding it came in, as
// upstream's pipeline does (core/proxy.rs:478-505).
func encodeAs(encoding string, body []byte) ([]byte, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "br":
		w = brotli.NewWriter(&buf)
	default:
		return body, nil
	}
	if _, err := w.Write(body); err != nil {
		return nil, fmt.Errorf("firstparty: encode %s: %w", encoding, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("firstparty: encode %s: %w", encoding, err)
	}
	return buf.Bytes(), nil
}
