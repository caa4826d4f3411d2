package proxy

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// The head script, encoded once per matched slot set, is for each page the
// one its own slots encode to: pages matching different sets never get
// each other's, however they alternate, served over HTTP.
func TestHeadScriptCachedPerSlotSet(t *testing.T) {
	twoSlots := func(c *config.Config) {
		c.CreativeOpportunities.Slots = []config.Slot{
			{ID: "top", PagePatterns: []string{"/**"}, Formats: [][]int{{728, 90}}, GAMUnitPath: "/1/top"},
			{ID: "side", PagePatterns: []string{"/news/**"}, Formats: [][]int{{300, 250}}, GAMUnitPath: "/1/side"},
		}
	}
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(e.page()))
	}), twoSlots)
	for _, path := range []string{"/a", "/news/b", "/c", "/news/d", "/a"} {
		want, err := rewrite.AdSlotsScript(e.guest.matchSlots(path))
		if err != nil {
			t.Fatal(err)
		}
		_, body := e.mustGet(t, path, navigate)
		if !bytes.Contains(body, want) {
			t.Fatalf("%s: the page lacks its own slots' script %.120q", path, want)
		}
		if side := strings.Contains(string(body), "/1/side"); side != strings.HasPrefix(path, "/news/") {
			t.Fatalf("%s: side slot in the page = %v", path, side)
		}
	}
}
