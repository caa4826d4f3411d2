// Package compress decodes and re-encodes HTTP content codings (gzip,
// deflate, br) for a streaming rewriting proxy, and negotiates which codings
// to ask the origin for.
//
// The decoder is strict on purpose: a proxy that turned a truncated or corrupt
// origin body into a clean EOF would serve a silently truncated page, so every
// way the compressed stream can end early or badly surfaces as a *DecodeError.
package compress

import "strings"

// Coding is an HTTP content coding as it appears in Content-Encoding.
type Coding string

// The content codings the proxy can decode and re-encode.
const (
	Identity Coding = "identity"
	Gzip     Coding = "gzip"
	Deflate  Coding = "deflate"
	Brotli   Coding = "br"
)

// ParseContentEncoding maps a Content-Encoding header value to a Coding.
//
// Only a single supported coding is accepted. Stacked codings ("gzip, br")
// are rejected rather than unwrapped because origins practically never send
// them and the proxy would have to re-stack them on the way out; aliases like
// "x-gzip" are rejected so that the coding mirrored to the client is always
// spelled exactly as the proxy emits it.
func ParseContentEncoding(v string) (Coding, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "identity":
		return Identity, true
	case "gzip":
		return Gzip, true
	case "deflate":
		return Deflate, true
	case "br":
		return Brotli, true
	}
	return "", false
}
