package demo

import (
	"regexp"
	"strings"
	"testing"
)

// The /spa page's navigation was a run of bare links (no markup a style
// could take, no view marked as current) and every page but the home page
// said "0 stories on this page, 0 in the page state" in its footer: the
// counts are the home page's, whose teasers and page state its scripts
// count. Now the app's views are a list whose current view carries
// aria-current, styled as tabs by site.css, and the counts are on the home
// page alone. TestDemoSPAInBrowser checks how Chromium renders them.
func TestSPANavigationIsAListWithTheCurrentViewAndFootersCountOnlyOnHome(t *testing.T) {
	_, base := originServer(t)
	current := regexp.MustCompile(`<li><a [^>]*data-spa aria-current="page"[^>]*>([^<]*)</a></li>`)
	for _, path := range SPAPaths() {
		_, body := fetch(t, "GET", base+path, nil)
		page := string(body)
		nav := page[strings.Index(page, `<nav class="spa-nav"`):]
		nav = nav[:strings.Index(nav, "</nav>")]
		if strings.Count(nav, "<li>") != len(SPAPaths()) || !strings.Contains(nav, "<ul>") {
			t.Errorf("%s: the views are not a list of %d: %s", path, len(SPAPaths()), nav)
		}
		m := current.FindAllStringSubmatch(nav, -1)
		if len(m) != 1 || !strings.Contains(nav, `href="`+base+path+`" data-spa aria-current="page"`) {
			t.Errorf("%s: current view marked %q, want its own link alone", path, m)
		}
		if len(m) == 1 && len(m[0][1]) > 20 {
			t.Errorf("%s: tab label %q is a headline, not a short name", path, m[0][1])
		}
	}
	for _, path := range append([]string{AboutPath, SPAPath}, ArticlePaths()...) {
		if _, body := fetch(t, "GET", base+path, nil); strings.Contains(string(body), "stories on this page") {
			t.Errorf("%s: the footer counts stories it does not have", path)
		}
	}
	if _, body := fetch(t, "GET", base+HomePath, nil); !strings.Contains(string(body), `<span id="teaser-count">0</span> stories on this page`) {
		t.Errorf("the home page lost its counts")
	}
	_, css := fetch(t, "GET", base+"/static/site.css", nil)
	for _, rule := range []string{".spa-nav ul{", ".spa-nav a{", `.spa-nav a[aria-current="page"]{`, ".spa-nav button{"} {
		if !strings.Contains(string(css), rule) {
			t.Errorf("site.css has no %s rule", rule)
		}
	}
}
