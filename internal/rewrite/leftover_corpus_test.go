package rewrite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

// TestCorpusNoOriginURLLeft: on every corpus page, rewritten for its own
// origin host as ssatd serves it, no absolute origin URL is left in any
// form FindLeftovers knows, except in the contexts docs/behaviour.md
// names (LeftoverExcepted); and the pages named it before.
func TestCorpusNoOriginURLLeft(t *testing.T) {
	files := testutil.RequireCorpus(t)
	var before, after, excepted []Leftover
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, origin := range leftoverOrigins(page) {
			before = append(before, FindLeftovers(page, origin)...)
			for _, l := range FindLeftovers(RewriteForLeftovers(t, page, origin), origin) {
				if LeftoverExcepted(l) {
					excepted = append(excepted, l)
					continue
				}
				t.Errorf("%s [%s]: %s %q left: %q", filepath.Base(f), origin, l.Context, l.Form, l.Excerpt)
				after = append(after, l)
			}
		}
	}
	if len(before) == 0 {
		t.Fatal("no corpus page names its origin: the test checks nothing")
	}
	t.Logf("before the rewrite: %d\n%s", len(before), LeftoverSummary(before))
	t.Logf("after: %d, and %d where docs/behaviour.md says why\n%s", len(after), len(excepted), LeftoverSummary(append(after, excepted...)))
}
