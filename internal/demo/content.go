package demo

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"text/template"
	"time"
)

//go:embed assets
var assets embed.FS

// The demo pages are generated at startup from the embedded templates and
// word lists, with a fixed seed, so every run (and every test) serves the
// same bytes for the same origin host.
const seed = 20240611

// Page sizes the generator aims for: a large home page like a news front
// page, and article pages of a few hundred KB.
const (
	homeTargetBytes    = 1 << 20
	articleTargetBytes = 320 << 10
)

type story struct {
	ID       int
	Host     string
	Path     string
	Headline string
	Summary  string
	Author   string
	Image    string
	Minutes  int
	Date     string
	Track    string // a per-story tracking id, as real pages carry many
}

type section struct {
	ID      string
	Name    string
	Path    string
	Teasers []story
}

type comment struct {
	Token  string
	ID     int
	Author string
	Text   string
}

type articleRef struct {
	Path     string
	Section  string
	Headline string
}

// pageData is what the templates see.
type pageData struct {
	Host        string
	Path        string
	Kind        string
	Section     string
	Title       string
	Description string
	Articles    []articleRef

	// home
	Lead      story
	Sections  []section
	MostRead  []story
	StateJSON string

	// article
	Story    story
	Body     []string
	Related  []story
	Comments []comment
	LDJSON   string

	// SPA
	SPARoutes []spaRoute
	SPAView   spaRoute
	SPAJSON   string // the routes by path, as JSON, for the app's router
}

// spaRoute is one view of the single-page app.
type spaRoute struct {
	Path  string `json:"-"`
	Label string `json:"-"` // its tab in the app's navigation
	Title string `json:"title"`
	Text  string `json:"text"`
	// Units are the view's ad units, which the app registers with
	// tsjs.addAdUnits before it calls requestAds, as a publisher does:
	// tsjs auctions only registered units (core/request.ts).
	Units []adUnit `json:"units"`
}

// adUnit is a tsjs ad unit (core/types.ts, AdUnit).
type adUnit struct {
	Code       string `json:"code"`
	MediaTypes struct {
		Banner struct {
			Sizes [][]int `json:"sizes"`
		} `json:"banner"`
	} `json:"mediaTypes"`
	Bids []unitBid `json:"bids"`
}

type unitBid struct {
	Bidder string `json:"bidder"`
	Params any    `json:"params"`
}

// unitsFor are the ad units of the slots whose page patterns match p.
func unitsFor(p string) []adUnit {
	var out []adUnit
	for _, s := range Slots() {
		if !slices.ContainsFunc(s.PagePatterns, func(pat string) bool { ok, _ := path.Match(pat, p); return ok }) {
			continue
		}
		u := adUnit{Code: s.ID, Bids: []unitBid{}}
		u.MediaTypes.Banner.Sizes = s.Formats
		for _, b := range slices.Sorted(maps.Keys(s.Bidders)) {
			u.Bids = append(u.Bids, unitBid{Bidder: b, Params: s.Bidders[b]})
		}
		out = append(out, u)
	}
	return out
}

// words is the embedded text the pages are assembled from.
type words struct {
	headlines  []string
	sentences  []string
	authors    []string
	sectionsOf []string
}

func loadWords() (*words, error) {
	read := func(name string) ([]string, error) {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, html.EscapeString(l))
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("demo: assets/%s is empty", name)
		}
		return out, nil
	}
	var w words
	var err error
	if w.headlines, err = read("headlines.txt"); err != nil {
		return nil, err
	}
	if w.sentences, err = read("paragraphs.txt"); err != nil {
		return nil, err
	}
	if w.authors, err = read("authors.txt"); err != nil {
		return nil, err
	}
	w.sectionsOf = []string{"News", "Transport", "Business", "Sport", "Culture", "Environment", "Health", "Opinion"}
	return &w, nil
}

// articles are the article pages the origin serves; the home page's teasers
// link to them, so every link on a demo page leads somewhere.
var articles = []struct{ slug, section, headline string }{
	{"city-council-approves-tram-extension", "Transport", "City council approves the tram extension to the harbour district"},
	{"river-walk-reopens", "Environment", "The river walk reopens with wider paths and new lighting"},
	{"market-hall-mural", "Culture", "Market hall restoration uncovers a forgotten tiled mural"},
}

// ArticlePaths lists the article pages' paths.
func ArticlePaths() []string {
	out := make([]string, len(articles))
	for i, a := range articles {
		out[i] = "/articles/" + a.slug
	}
	return out
}

type generator struct {
	w    *words
	rng  *rand.Rand
	host string
	t    *template.Template
}

func newGenerator(host string) (*generator, error) {
	w, err := loadWords()
	if err != nil {
		return nil, err
	}
	t, err := template.ParseFS(assets, "assets/layout.tmpl", "assets/*.html.tmpl")
	if err != nil {
		return nil, fmt.Errorf("demo: templates: %w", err)
	}
	g := &generator{w: w, host: host, t: t}
	g.reseed(0)
	return g, nil
}

// reseed gives each page its own random stream, so a page does not depend
// on which pages were generated before it.
func (g *generator) reseed(page uint64) { g.rng = rand.New(rand.NewPCG(seed, page)) }

func (g *generator) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *generator) paragraph(minS, maxS int) string {
	n := minS + g.rng.IntN(maxS-minS+1)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.pick(g.w.sentences)
	}
	return strings.Join(parts, " ")
}

var epoch = time.Date(2024, 6, 11, 0, 0, 0, 0, time.UTC)

func (g *generator) story(id int) story {
	a := articles[id%len(articles)]
	return story{
		ID:       id,
		Host:     g.host,
		Path:     "/articles/" + a.slug,
		Headline: g.pick(g.w.headlines),
		Summary:  g.paragraph(2, 3),
		Author:   g.pick(g.w.authors),
		Image:    fmt.Sprintf("story-%02d", g.rng.IntN(storyImages)),
		Minutes:  2 + g.rng.IntN(9),
		Date:     epoch.Add(-time.Duration(id) * 37 * time.Minute).Format("2006-01-02T15:04Z"),
		Track:    fmt.Sprintf("%016x", g.rng.Uint64()),
	}
}

func (g *generator) base(path, kind, sectionName, title, desc string) pageData {
	d := pageData{Host: g.host, Path: path, Kind: kind, Section: sectionName, Title: title, Description: desc}
	for _, a := range articles {
		d.Articles = append(d.Articles, articleRef{Path: "/articles/" + a.slug, Section: a.section})
	}
	return d
}

func (g *generator) render(name string, d *pageData) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(homeTargetBytes + 64<<10)
	if err := g.t.ExecuteTemplate(&b, name, d); err != nil {
		return nil, fmt.Errorf("demo: render %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// home builds the front page: sections of teasers until the page reaches
// its target size, plus the page state as inline JSON, as a JavaScript
// framework would embed it.
func (g *generator) home() ([]byte, error) {
	g.reseed(1)
	d := g.base("/", "home", "home", "Front page", "News, sport and culture from the harbour town (demo).")
	d.Lead = g.story(0)
	id := 1
	// Each section holds 24 teasers of roughly 900 bytes; the page state
	// adds about a quarter again.
	var all []story
	for s := 0; ; s++ {
		name := g.w.sectionsOf[s%len(g.w.sectionsOf)]
		sec := section{ID: fmt.Sprintf("%s-%d", strings.ToLower(name), s), Name: name, Path: "/"}
		for range 24 {
			st := g.story(id)
			id++
			sec.Teasers = append(sec.Teasers, st)
			all = append(all, st)
		}
		d.Sections = append(d.Sections, sec)
		if len(all)*1150 >= homeTargetBytes {
			break
		}
	}
	d.MostRead = all[:10]
	type stateStory struct {
		ID       int    `json:"id"`
		URL      string `json:"url"`
		Headline string `json:"headline"`
		Author   string `json:"author"`
		Image    string `json:"image"`
		Date     string `json:"date"`
		Track    string `json:"track"`
	}
	state := struct {
		Edition string       `json:"edition"`
		Stories []stateStory `json:"stories"`
	}{Edition: "harbour"}
	for _, st := range all {
		state.Stories = append(state.Stories, stateStory{ID: st.ID, URL: "http://" + g.host + st.Path,
			Headline: html.UnescapeString(st.Headline), Author: html.UnescapeString(st.Author),
			Image: "http://" + g.host + "/img/" + st.Image + ".svg", Date: st.Date, Track: st.Track})
	}
	// encoding/json escapes <, > and & so the JSON cannot end the script
	// element early.
	js, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	d.StateJSON = string(js)
	return g.render("home.html.tmpl", &d)
}

func (g *generator) article(i int) ([]byte, error) {
	g.reseed(uint64(100 + i))
	a := articles[i]
	path := "/articles/" + a.slug
	st := g.story(i)
	st.Headline = html.EscapeString(a.headline)
	d := g.base(path, "article", strings.ToLower(a.section), st.Headline, "A demo article from the Harbour Gazette.")
	d.Story = st
	for range 40 {
		d.Body = append(d.Body, g.paragraph(3, 6))
	}
	for j := range 8 {
		d.Related = append(d.Related, g.story(i+1+j))
	}
	// Comments make up the bulk, as on a busy article.
	size := 40 * 600
	for c := 1; size < articleTargetBytes; c++ {
		cm := comment{ID: c, Author: g.pick(g.w.authors), Text: g.paragraph(1, 4), Token: fmt.Sprintf("%012x", g.rng.Uint64()>>16)}
		size += len(cm.Text) + 260
		d.Comments = append(d.Comments, cm)
	}
	ld, err := json.Marshal(map[string]any{
		"@context": "https://schema.org", "@type": "NewsArticle",
		"headline": html.UnescapeString(st.Headline), "datePublished": st.Date,
		"author": map[string]string{"@type": "Person", "name": html.UnescapeString(st.Author)},
		"image":  "http://" + g.host + "/img/" + st.Image + ".svg",
		"url":    "http://" + g.host + path,
	})
	if err != nil {
		return nil, err
	}
	d.LDJSON = string(ld)
	return g.render("article.html.tmpl", &d)
}

// SPAPath is the single-page app's entry; SPAPaths lists every view's path.
const SPAPath = "/spa"

// SPAPaths lists the paths of the single-page app's views, entry first.
func SPAPaths() []string {
	out := []string{SPAPath}
	for _, a := range articles {
		out = append(out, SPAPath+"/"+a.slug)
	}
	return out
}

func (g *generator) spaRoutes() []spaRoute {
	g.reseed(100)
	routes := []spaRoute{{Path: SPAPath, Label: "Live desk", Title: "Live desk", Text: g.paragraph(3, 4)}}
	for _, a := range articles {
		routes = append(routes, spaRoute{Path: SPAPath + "/" + a.slug, Label: a.section, Title: a.section + ": " + a.headline, Text: g.paragraph(3, 5)})
	}
	return routes
}

// spa builds the single-page app's page for one of its views: the same
// shell, with that view rendered, so a reload of any view works.
func (g *generator) spa(path string) ([]byte, error) {
	routes := g.spaRoutes()
	byPath := map[string]spaRoute{}
	d := g.base(path, "spa", "spa", "Live desk", "The live desk, a single-page app (demo).")
	for _, r := range routes {
		// The router sets textContent: the words are stored HTML-escaped.
		byPath[r.Path] = spaRoute{Title: html.UnescapeString(r.Title), Text: html.UnescapeString(r.Text), Units: unitsFor(r.Path)}
		if r.Path == path {
			d.SPAView, d.Title = r, r.Title
		}
	}
	js, err := json.Marshal(byPath)
	if err != nil {
		return nil, err
	}
	d.SPARoutes, d.SPAJSON = routes, string(js)
	return g.render("spa.html.tmpl", &d)
}

func (g *generator) about() ([]byte, error) {
	d := g.base("/about", "about", "about", "About the Gazette", "About this demo site.")
	return g.render("about.html.tmpl", &d)
}

// storyImages is how many distinct story images the origin serves.
const storyImages = 24

// svgImage draws a small placeholder picture whose colours derive from its
// name, so every story image looks different but is always the same.
func svgImage(name string, w, h int, label string) []byte {
	f := fnv.New32a()
	_, _ = f.Write([]byte(name))
	v := f.Sum32()
	hue := v % 360
	return fmt.Appendf(nil, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+
		`<rect width="100%%" height="100%%" fill="hsl(%d,45%%,78%%)"/>`+
		`<circle cx="%d" cy="%d" r="%d" fill="hsl(%d,55%%,55%%)"/>`+
		`<path d="M0 %d L%d %d L%d %d L%d %d Z" fill="hsl(%d,35%%,40%%)"/>`+
		`<text x="8" y="%d" font-family="sans-serif" font-size="%d" fill="#222">%s</text></svg>`,
		w, h, w, h, hue, w*3/4, h/3, h/6, (hue+40)%360,
		h, w/3, h/2, w*2/3, h*3/4, w, h, (hue+180)%360, h-8, max(10, h/8), html.EscapeString(label))
}

// logoSVG is the masthead logo.
func logoSVG() []byte {
	return []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="240" height="40" viewBox="0 0 240 40">` +
		`<rect width="40" height="40" rx="6" fill="#0b5c8c"/><path d="M6 28 Q20 8 34 28" stroke="#fff" stroke-width="4" fill="none"/>` +
		`<text x="50" y="27" font-family="Georgia,serif" font-size="19" font-weight="bold" fill="#1b1b1b" textLength="186" lengthAdjust="spacingAndGlyphs">The Harbour Gazette</text></svg>`)
}
