package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

// textBody names the origin in every text form: scheme-qualified,
// protocol-relative, JSON-escaped and bare, with a longer host and a mail
// address that must stay.
const textBody = `a{b:url(http://ORIGIN/i.png)} c{d:url("//ORIGIN/j.png")} ` +
	`{"u":"http:\/\/ORIGIN\/k"} "ORIGIN/l" x/ORIGIN/m cdn.ORIGIN ads@ORIGIN`

// textOrigin answers every request with body (its ORIGIN replaced by the
// origin's host:port) as contentType in coding c, with a strong ETag and
// its length.
func textOrigin(e **env, contentType string, c compress.Coding, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b := []byte(strings.ReplaceAll(body, "ORIGIN", (*e).host))
		if c != compress.Identity {
			b, _ = compress.Encode(c, b, originOpts)
			w.Header().Set("Content-Encoding", string(c))
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("ETag", `"t1"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b)
	}
}

// TestTextResponsesRewritten: text responses of
// publisher.rewrite_content_types get the text rules in every origin
// coding, re-encoded in it (mirror); other types pass through as the
// origin sent them.
func TestTextResponsesRewritten(t *testing.T) {
	// The guest's request view: plain HTTP to testDomain.
	head := `a{b:url(http://` + testDomain + `/i.png)} c{d:url("//` + testDomain + `/j.png")} ` +
		`{"u":"http:\/\/` + testDomain + `\/k"} "` + testDomain + `/l" `
	other := head + `x/` + testDomain + `/m cdn.ORIGIN ads@ORIGIN`
	script := head + `x/ORIGIN/m cdn.ORIGIN ads@ORIGIN` // code, not a string: a bare host stays
	tests := []struct {
		contentType string
		want        string // "" means unchanged
	}{
		{"text/css", other},
		{"application/javascript; charset=utf-8", script},
		{"application/json", other},
		{"text/xml", other},
		{"text/plain", other},
		{"application/rss+xml", ""}, // not in upstream's set
		{"image/svg+xml", ""},
	}
	for _, tt := range tests {
		for _, c := range allCodings {
			t.Run(tt.contentType+"/"+string(c), func(t *testing.T) {
				var e *env
				e = newEnv(t, textOrigin(&e, tt.contentType, c, textBody))
				resp, body := e.mustGet(t, "/x", header("Accept-Encoding", "gzip, deflate, br"))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				if got := resp.Header.Get("Content-Encoding"); got != string(c) && !(c == compress.Identity && got == "") {
					t.Fatalf("Content-Encoding %q, want the origin's %q", got, c)
				}
				plain := string(decode(t, c, body))
				want := strings.ReplaceAll(tt.want, "ORIGIN", e.host)
				if tt.want == "" {
					want = strings.ReplaceAll(textBody, "ORIGIN", e.host)
					if resp.Header.Get("ETag") != `"t1"` {
						t.Errorf("a passed-through response lost its ETag: %q", resp.Header.Get("ETag"))
					}
				} else if resp.Header.Get("ETag") != `W/"t1"` || resp.Header.Get("Content-Length") != "" {
					t.Errorf("rewritten response headers: ETag %q, Content-Length %q", resp.Header.Get("ETag"), resp.Header.Get("Content-Length"))
				}
				if plain != want {
					t.Fatalf("body\n got %q\nwant %q", plain, want)
				}
			})
		}
	}
}

// TestTextResponsesOffReturnsOriginBytes: rewrite_content_types = []
// passes text through byte for byte, with its length.
func TestTextResponsesOffReturnsOriginBytes(t *testing.T) {
	var e *env
	e = newEnv(t, textOrigin(&e, "text/css", compress.Gzip, textBody), func(c *config.Config) { c.Publisher.RewriteContentTypes = []string{} })
	resp, body := e.mustGet(t, "/s.css", header("Accept-Encoding", "gzip"))
	if got := string(decode(t, compress.Gzip, body)); got != strings.ReplaceAll(textBody, "ORIGIN", e.host) || resp.Header.Get("Content-Length") == "" {
		t.Fatalf("body %q, Content-Length %q", got, resp.Header.Get("Content-Length"))
	}
}

// TestTextResponseOffload: an eligible request in offload mode gets
// identity with the hint, as a page does.
func TestTextResponseOffload(t *testing.T) {
	var e *env
	e = newEnv(t, textOrigin(&e, "application/json", compress.Gzip, textBody), offload("external"))
	resp, body := e.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip, br"))
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get(ssat.HintHeader) != "on" {
		t.Fatalf("Content-Encoding %q, hint %q", resp.Header.Get("Content-Encoding"), resp.Header.Get(ssat.HintHeader))
	}
	if !strings.Contains(string(body), `"http:\/\/`+testDomain+`\/k"`) {
		t.Fatalf("body not rewritten: %q", body)
	}
}

// TestTextResponseLimits: a text response above the raw limit is refused
// before its headers, and one that decodes past the decoded limit never
// ends as complete.
func TestTextResponseLimits(t *testing.T) {
	big := strings.Repeat("a{b:url(//ORIGIN/x.png)}\n", 4000) // ~100 KB
	var e *env
	e = newEnv(t, textOrigin(&e, "text/css", compress.Identity, big), func(c *config.Config) { c.Publisher.MaxOriginResponseBytes = 32 << 10 })
	if resp, _ := e.mustGet(t, "/s.css"); resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d for a text response above the raw limit, want 502", resp.StatusCode)
	}
	var d *env
	d = newEnv(t, textOrigin(&d, "text/css", compress.Gzip, big), func(c *config.Config) { c.Publisher.MaxDecodedBodyBytes = 32 << 10 })
	resp, body, err := d.get(t, "/s.css", header("Accept-Encoding", "gzip"))
	if err != nil || resp.StatusCode != http.StatusOK {
		return // refused or aborted: not complete
	}
	r, err := compress.NewReader(compress.Gzip, bytes.NewReader(body), 1<<30)
	if err != nil {
		return
	}
	defer r.Close()
	if plain, err := io.ReadAll(r); err == nil {
		t.Fatalf("a text response past the decoded limit arrived complete (%d bytes)", len(plain))
	}
}

// TestTextResponseIsNotAPageWithoutOriginHost: the metric counts pages.
func TestTextResponseIsNotAPageWithoutOriginHost(t *testing.T) {
	var e *env
	e = newEnv(t, textOrigin(&e, "text/css", compress.Identity, "a{}"))
	e.mustGet(t, "/s.css")
	e.accessLine(t, 1)
	if got := e.guest.Metrics().Sum("ssatd_pages_without_origin_host_total", nil); got != 0 {
		t.Fatalf("pages without origin host = %v after a CSS response", got)
	}
}

// TestTextResponseHeadMatchesGet: HEAD gets the headers GET gets.
func TestTextResponseHeadMatchesGet(t *testing.T) {
	var e *env
	e = newEnv(t, textOrigin(&e, "text/css", compress.Gzip, textBody))
	get, _ := e.mustGet(t, "/s.css", header("Accept-Encoding", "gzip"))
	req, _ := http.NewRequest(http.MethodHead, e.front.URL+"/s.css", nil)
	req.Host = testDomain
	req.Header.Set("Accept-Encoding", "gzip")
	head, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	for _, k := range []string{"ETag", "Cache-Control", "Content-Encoding", "Content-Length"} {
		if head.Header.Get(k) != get.Header.Get(k) {
			t.Errorf("%s: HEAD %q, GET %q", k, head.Header.Get(k), get.Header.Get(k))
		}
	}
}

// flightBody is a React Server Components payload naming host: a JSON
// row, a text row with its length in UTF-8 bytes, and a row after it.
func flightBody(host string) string {
	text := "see http://" + host + "/a, é " + host + "/b"
	return `0:["$","a",null,{"href":"http://` + host + `/x"}]` + "\n" +
		fmt.Sprintf("1:T%x,", len(text)) + text + `2:"ok"` + "\n"
}

// TestFlightResponseRewritten: a text/x-component response (in
// rewrite_content_types by text/*) gets the text rules row by row, in
// every origin coding, and its text row the length of its new content,
// as upstream's rsc_flight.rs does.
func TestFlightResponseRewritten(t *testing.T) {
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			var e *env
			e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// The body with the origin's host:port, its length right.
				textOrigin(&e, "text/x-component", c, flightBody(e.host))(w, r)
			}))
			resp, body := e.mustGet(t, "/page?_rsc=1", header("Accept-Encoding", "gzip, deflate, br"))
			if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `W/"t1"` {
				t.Fatalf("status %d ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
			}
			if got, want := string(decode(t, c, body)), flightBody(testDomain); got != want {
				t.Fatalf("body\n got %q\nwant %q", got, want)
			}
		})
	}
}
