package rewrite_test

import (
	"testing"

	"github.com/ssatd/ssatd/internal/demo"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// demoOriginHost is the origin as `ssatd demo` names it: loopback and the
// origin listener's port.
const demoOriginHost = "127.0.0.1:18080"

// demoLeftovers rewrites every page of the demo origin and returns the
// absolute origin URLs left in them, and how many the pages held before.
func demoLeftovers(t *testing.T) (before int, left []rewrite.Leftover) {
	t.Helper()
	o, err := demo.NewOrigin(demo.OriginOptions{Host: demoOriginHost})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range o.Pages() {
		page, ok := o.Body(p.Path)
		if !ok {
			t.Fatalf("no body for %s", p.Path)
		}
		before += len(rewrite.FindLeftovers(page, demoOriginHost))
		for _, l := range rewrite.FindLeftovers(rewrite.RewriteForLeftovers(t, page, demoOriginHost), demoOriginHost) {
			l.Excerpt = p.Path + ": " + l.Excerpt
			left = append(left, l)
		}
	}
	return before, left
}

// TestDemoNoOriginURLLeft: on every page of the demo origin, no absolute
// origin URL is left after the rewrite, and the pages named it before.
func TestDemoNoOriginURLLeft(t *testing.T) {
	before, left := demoLeftovers(t)
	for _, l := range left {
		if !rewrite.LeftoverExcepted(l) {
			t.Errorf("%s %q left: %q", l.Context, l.Form, l.Excerpt)
		}
	}
	if before == 0 {
		t.Fatal("no demo page names the origin: the test checks nothing")
	}
	t.Logf("before the rewrite: %d; after: %d\n%s", before, len(left), rewrite.LeftoverSummary(left))
}
