package tsjs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

func TestBundleServedByGuest(t *testing.T) {
	originHits := 0
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { originHits++ }))
	sum := sha256.Sum256([]byte("bundle"))
	hash := hex.EncodeToString(sum[:])
	tests := []struct {
		name, query, cache string
	}{
		{"hashed URL is immutable", "?v=" + hash, "public, max-age=31536000, immutable"},
		{"stale hash is short-lived", "?v=0000", "public, max-age=300"},
		{"no hash is short-lived", "", "public, max-age=300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.mustGet(t, rewrite.BundlePath+tt.query, header("Accept-Encoding", "br"))
			if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != tt.cache {
				t.Fatalf("status %d Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
			}
			if resp.Header.Get("Content-Encoding") != "br" || resp.Header.Get(ssat.HintHeader) != "" {
				t.Fatalf("the edge did not compress the bundle: %v", resp.Header)
			}
			if string(decode(t, compress.Brotli, body)) != "bundle" {
				t.Fatalf("body %q", body)
			}
		})
	}
	// The access line shows what the guest wrote (the bundle, unencoded)
	// beside what the edge sent.
	for i := range tests {
		line := e.accessLine(t, i+1)
		if line["route"] != "bundle" || line["status"] != int64(200) ||
			line["guest_output_coding"] != "identity" || line["guest_output_bytes"] != int64(len("bundle")) ||
			line["output_coding"] != "br" {
			t.Fatalf("access line %d: %v", i+1, line)
		}
	}
	resp, _ := e.mustGet(t, rewrite.BundlePath, header("If-None-Match", `"`+hash+`"`))
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: status %d", resp.StatusCode)
	}
	if line := e.accessLine(t, len(tests)+1); line["status"] != int64(http.StatusNotModified) || line["guest_output_bytes"] != int64(0) {
		t.Fatalf("revalidation access line: %v", line)
	}
	if originHits != 0 {
		t.Fatalf("the bundle request reached the origin %d times", originHits)
	}
}
