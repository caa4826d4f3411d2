package rewrite

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ssatd/ssatd/internal/ssat"
)

// Regression (issue 30, "deep SVG puts the bids script inside the page's
// own <script>"), in Chromium: with <svg> and 255 nested <g>, the bids
// script went into the string of the <foreignObject>'s script, which then
// broke, and the rest of it showed as text. Each page is rewritten by
// Rewrite with the real bids script and loaded in headless Chromium over
// loopback HTTP: the page's script runs, no script text shows, and the
// bids run where a script there runs (SVG), and are left out where one
// would not (MathML).
func TestDeepSVGBidsNotInsidePageScriptInBrowser(t *testing.T) {
	bin := browserOrSkip(t)
	bids, err := BidsScript(map[string]ssat.Bid{"top": {Adm: "<span>ad</span>", W: 300, H: 250}})
	if err != nil {
		t.Fatal(err)
	}
	const pageScript = `<foreignObject><script>var s = "</body>"; window.pageScriptRan = s.length;</script></foreignObject>`
	pages := []struct {
		name, deep string
		bids       bool
	}{
		{"svg", "<svg>" + strings.Repeat("<g>", maxForeignDepth-1), true},
		{"math", "<math>" + strings.Repeat("<mrow>", maxForeignDepth-1) + "<mi>", false},
	}
	mux := http.NewServeMux()
	for _, p := range pages {
		origin := "<!DOCTYPE html><html><head><title>t</title></head><body><p>before</p>" + p.deep + pageScript + "</body></html>"
		mux.HandleFunc("/"+p.name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			opts := &Options{HeadPrepend: []byte("<script>window.tsjs={}</script>"), BodyEnd: func() []byte { return bids }}
			if _, err := Rewrite(w, strings.NewReader(origin), opts); err != nil {
				t.Errorf("rewrite: %v", err)
			}
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	browserCtx := startChromium(t, bin)
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			tab, cancelTab := chromedp.NewContext(browserCtx)
			defer cancelTab()
			type shown struct {
				PageScript int    `json:"pageScript"`
				Bids       bool   `json:"bids"`
				Text       string `json:"text"`
			}
			if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/"+p.name)); err != nil {
				t.Fatal(err)
			}
			got, err := chromedp.Run(tab, chromedp.Evaluate[shown](`({pageScript: window.pageScriptRan || 0,
				bids: !!(window.tsjs.bids && window.tsjs.bids.top),
				text: document.body.innerText})`))
			if err != nil {
				t.Fatal(err)
			}
			if got.PageScript != len("</body>") || got.Bids != p.bids || strings.TrimSpace(got.Text) != "before" {
				t.Errorf("page script ran: %d (want %d), bids ran: %v (want %v), text shown: %q (want %q)",
					got.PageScript, len("</body>"), got.Bids, p.bids, got.Text, "before")
			}
		})
	}
}
