package tsjs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/rewrite"
)

// TestBundleETagNotStrongAcrossCodings catches the bundle sending one
// strong ETag for its identity, gzip and br bodies: a strong validator
// must differ between content codings (RFC 9110 §8.8.3), or a cache may
// combine or range-request bytes of different representations.
func TestBundleETagNotStrongAcrossCodings(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tags := map[string]string{}
	for _, ae := range []string{"identity", "gzip", "br"} {
		resp, _ := e.mustGet(t, rewrite.BundlePath, header("Accept-Encoding", ae))
		tag := resp.Header.Get("ETag")
		if tag == "" {
			t.Fatalf("%s: no ETag", ae)
		}
		tags[resp.Header.Get("Content-Encoding")+"|"+ae] = tag
	}
	seen := map[string]string{}
	for rep, tag := range tags {
		if other, dup := seen[tag]; dup && !strings.HasPrefix(tag, "W/") {
			t.Errorf("representations %s and %s share the strong ETag %s", rep, other, tag)
		}
		seen[tag] = rep
	}
	// Revalidation keeps working with either spelling a cache sends back.
	sum := sha256.Sum256([]byte("bundle"))
	hash := hex.EncodeToString(sum[:])
	for _, inm := range []string{`W/"` + hash + `"`, `"` + hash + `"`} {
		resp, _ := e.mustGet(t, rewrite.BundlePath, header("If-None-Match", inm), header("Accept-Encoding", "br"))
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s: status %d, want 304", inm, resp.StatusCode)
		}
	}
}
