package rewrite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

func TestCorpusLeftoverOriginURLs(t *testing.T) {
	files := testutil.RequireCorpus(t)
	var before, after []Leftover
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, origin := range leftoverOrigins(page) {
			before = append(before, FindLeftovers(page, origin)...)
			left := FindLeftovers(RewriteForLeftovers(t, page, origin), origin)
			for _, l := range left {
				t.Logf("%s [%s] %s %q: %q", filepath.Base(f), origin, l.Context, l.Form, l.Excerpt)
			}
			after = append(after, left...)
		}
	}
	t.Logf("before the rewrite: %d\n%s", len(before), LeftoverSummary(before))
	t.Logf("after the rewrite: %d\n%s", len(after), LeftoverSummary(after))
}
