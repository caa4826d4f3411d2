package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/csp"
	"github.com/ssatd/ssatd/internal/ssat"
)

// svelteStart is SvelteKit 2's start script as a prerendered page carries
// it (adapter-node build of cmd/ssatd/testdata/sveltekit-csp), with the
// origin in the page's data.
const svelteStart = `
				{
					__sveltekit_1q2m7js = {
						base: new URL(".", location).pathname.slice(0, -1)
					};

					const element = document.currentScript.parentElement;

					Promise.all([
						import("./_app/immutable/entry/start.F19gj-YT.js"),
						import("./_app/immutable/entry/app.D4h9PFPz.js")
					]).then(([kit, app]) => {
						kit.start(app, element, {
							node_ids: [0, 3],
							data: [{type:"data",data:{share:"http://` + testOrigin + `/static?utm=share"},uses:{url:1}},null],
							form: null,
							error: null
						});
					});
				}
			`

func sha256Source(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// sveltePage is a SvelteKit page: its policy in a <meta> (prerendered,
// meta true) or none (the header has it), its start script allowed by
// hash or by nonce.
func sveltePage(meta bool, nonce string) string {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\">\n\t<head>\n\t\t<meta charset=\"utf-8\" />\n")
	if meta {
		b.WriteString(`		<meta http-equiv="content-security-policy" content="script-src 'self' ` + sha256Source(svelteStart) + `; style-src 'self'">` + "\n")
	}
	b.WriteString("\t</head>\n\t<body>\n\t\t<div style=\"display: contents\"><a id=\"share\" href=\"http://" + testOrigin + "/static?utm=share\">share</a>\n\t\t\t<script")
	if nonce != "" {
		b.WriteString(` nonce="` + nonce + `"`)
	}
	b.WriteString(">" + svelteStart + "</script>\n\t\t</div>\n\t</body>\n</html>\n")
	return b.String()
}

func cspOpts(t *testing.T, pg *csp.Page) *Options {
	t.Helper()
	slots, err := AdSlotsScript([]ssat.Slot{{ID: "top", DivID: "ad-top", Formats: [][]int{{728, 90}}}})
	if err != nil {
		t.Fatal(err)
	}
	o := testOpts()
	o.Inline = true
	o.HeadPrepend = append(slots, BundleTag("00")...)
	o.BodyEnd = func() []byte {
		b, _ := BidsScript(map[string]ssat.Bid{"top": {Adm: "<b>ad</b>", W: 728, H: 90}})
		return b
	}
	o.CSP = pg
	return o
}

var startScriptRE = regexp.MustCompile(`(?s)<script(?: nonce="[^"]*")?>(\s+\{\s+__sveltekit.*?)</script>`)

// TestPrerenderedStartScriptKeepsItsHash: SvelteKit's prerendered page
// allows its start script by SHA-256 in a <meta> policy; the inline rules
// rewrote the origin in the script's data, the hash no longer matched and
// Chromium blocked the script (the page never hydrated). The script is now
// left byte for byte, the link outside it is still rewritten, and the
// bids script after the policy goes in the loader form whose hash the
// policy was given.
func TestPrerenderedStartScriptKeepsItsHash(t *testing.T) {
	out, st := run(t, sveltePage(true, ""), cspOpts(t, &csp.Page{}))
	m := startScriptRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no start script in:\n%s", out)
	}
	if m[1] != svelteStart {
		t.Errorf("the start script changed, its hash with it:\n%s", m[1])
	}
	if !strings.Contains(out, `href="https://`+testHost+`/static?utm=share"`) {
		t.Errorf("the link outside the script was not rewritten:\n%s", out)
	}
	if st.CSPKept != 1 || st.CSPMetaChanged != 1 || !st.CSP.Loader || st.CSP.Keep&csp.KeepScripts == 0 {
		t.Errorf("stats: kept %d, metas changed %d, %+v", st.CSPKept, st.CSPMetaChanged, st.CSP)
	}
	wantMeta := `content="script-src 'self' ` + sha256Source(svelteStart) + ` '` + csp.LoaderHash + `'; style-src 'self'"`
	if !strings.Contains(out, wantMeta) {
		t.Errorf("the meta policy lacks the loader's hash; want %s in:\n%s", wantMeta, out)
	}
	if got := sha256Source(csp.LoaderJS); !strings.Contains(wantMeta, got) {
		t.Errorf("LoaderHash is not the loader's: %s", got)
	}
	// The head injection comes before the policy and stays as it is; the
	// bids after it are data and the loader.
	head, body, _ := strings.Cut(out, "</head>")
	if !strings.Contains(head, adSlotsOpen) {
		t.Errorf("the ad-slots script before the policy changed:\n%s", head)
	}
	if strings.Contains(body, bidsOpen) || !strings.Contains(body, `<script type="application/json" data-tsjs="bids">"`) ||
		!strings.Contains(body, "<script>"+csp.LoaderJS+"</script>") {
		t.Errorf("the bids are not in the loader form:\n%s", body)
	}
}

// TestInjectedScriptsCarryTheHeadersNonce: on a SvelteKit page rendered
// per request, the header's policy allows scripts by nonce; the injected
// ad-slots, bundle and bids scripts had none and were blocked. Each now
// carries it; the page's nonce-allowed script is still rewritten (a nonce
// does not depend on the bytes).
func TestInjectedScriptsCarryTheHeadersNonce(t *testing.T) {
	const nonce = "rAnd0m+/nonce=="
	h := []string{"script-src 'self' 'nonce-" + nonce + "'; style-src 'self' 'nonce-" + nonce + "'"}
	var pg csp.Page
	if pg.ReadHeader(h, csp.PendingBundle|csp.PendingInline) {
		t.Errorf("a nonce policy was changed: %q", h[0])
	}
	out, st := run(t, sveltePage(false, nonce), cspOpts(t, &pg))
	if n := strings.Count(out, "<script"); n != 4 || strings.Count(out, `<script nonce="`+nonce+`"`) != 4 {
		t.Errorf("want 4 scripts, each with the nonce:\n%s", out)
	}
	if strings.Contains(out, "http://"+testOrigin) {
		t.Errorf("the origin is left in a nonce-allowed page:\n%s", out)
	}
	if st.CSPKept != 0 || st.CSP.Loader || st.CSP.Nonce != nonce {
		t.Errorf("stats: kept %d, %+v", st.CSPKept, st.CSP)
	}
}

// TestHeaderHashPolicyKeepsScriptsAndTakesLoader: a hash policy in the
// header keeps every inline script and gives the injected ones the loader
// form, the head's included.
func TestHeaderHashPolicyKeepsScriptsAndTakesLoader(t *testing.T) {
	h := []string{"default-src 'self'; script-src 'self' " + sha256Source(svelteStart)}
	var pg csp.Page
	if !pg.ReadHeader(h, csp.PendingBundle|csp.PendingInline) || !strings.HasSuffix(h[0], " '"+csp.LoaderHash+"'") {
		t.Fatalf("header policy not given the loader's hash: %q", h[0])
	}
	out, st := run(t, sveltePage(false, ""), cspOpts(t, &pg))
	if m := startScriptRE.FindStringSubmatch(out); m == nil || m[1] != svelteStart {
		t.Errorf("the start script changed:\n%s", out)
	}
	if strings.Count(out, "<script>"+csp.LoaderJS+"</script>") != 2 || strings.Contains(out, adSlotsOpen) || strings.Contains(out, bidsOpen) {
		t.Errorf("want both injected scripts in the loader form:\n%s", out)
	}
	if st.CSPKept != 1 {
		t.Errorf("kept %d, want 1", st.CSPKept)
	}
}

// TestNoPolicyChangesNothing: without a policy, or with a policy that
// allows all inline scripts, the injection and the rewrite are as before.
func TestNoPolicyChangesNothing(t *testing.T) {
	for _, h := range [][]string{nil, {"script-src 'self' 'unsafe-inline'"}, {"img-src 'self'"}} {
		var pg csp.Page
		if pg.ReadHeader(h, csp.PendingBundle|csp.PendingInline) {
			t.Errorf("%q changed", h)
		}
		plain, _ := run(t, sveltePage(false, ""), cspOpts(t, nil))
		out, st := run(t, sveltePage(false, ""), cspOpts(t, &pg))
		if out != plain || st.CSPKept != 0 {
			t.Errorf("policy %q changed the page:\n%s", h, out)
		}
	}
}

// TestPolicyOutputIndependentOfReads: the policies' rules act on whole
// tags and where raw text starts, so the output does not depend on how
// the page is split into reads (TestSplitIndependence for the rest).
func TestPolicyOutputIndependentOfReads(t *testing.T) {
	doc := sveltePage(true, "")
	want, _ := run(t, doc, cspOpts(t, &csp.Page{}))
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 200 {
		var out bytes.Buffer
		if _, err := Rewrite(&out, &randomChunks{s: doc, rng: rng, max: 1 + k%64}, cspOpts(t, &csp.Page{})); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("run %d differs:\n%s\nwant\n%s", k, out.String(), want)
		}
	}
}

// TestMetaPolicyGivenTheLoaderKeepsTheInlineRules: a <meta> policy that
// names the origin host and is given the loader's hash still gets the
// request host, as any attribute under the inline rules, and its
// character references stay references.
func TestMetaPolicyGivenTheLoaderKeepsTheInlineRules(t *testing.T) {
	in := `<html><head><meta content='script-src https://` + testOrigin + ` &apos;sha256-AAAA&apos;' http-equiv=Content-Security-Policy>` +
		`</head><body><script>x="http://` + testOrigin + `/"</script></body></html>`
	out, st := run(t, in, cspOpts(t, &csp.Page{}))
	want := `<meta content='script-src https://` + testHost + ` &#39;sha256-AAAA&#39; &#39;` + csp.LoaderHash + `&#39;' http-equiv=Content-Security-Policy>`
	if !strings.Contains(out, want) {
		t.Errorf("want %s in:\n%s", want, out)
	}
	if !strings.Contains(out, `<script>x="http://`+testOrigin+`/"</script>`) || st.CSPKept != 1 {
		t.Errorf("the script allowed by hash changed (kept %d):\n%s", st.CSPKept, out)
	}
}

// TestHashPolicyKeepsOnlyScriptsThatRun: a data block (JSON-LD, a JSON
// payload) is never run nor checked against a policy, so it keeps the
// inline rules under a hash policy; module scripts, import maps and
// scripts of a JavaScript type are kept.
func TestHashPolicyKeepsOnlyScriptsThatRun(t *testing.T) {
	url := "http://" + testOrigin + "/a"
	for _, c := range []struct {
		tag  string
		kept bool
	}{
		{`<script>`, true},
		{`<script type="">`, true},
		{`<script type=module>`, true},
		{`<script type=" Text/JavaScript ">`, true},
		{`<script type="importmap">`, true},
		{`<script type="application/ld+json">`, false},
		{`<script type="application/json" id=data>`, false},
		{`<script type="text/javascript; charset=utf-8">`, false}, // not run: the type is compared whole
	} {
		var pg csp.Page
		pg.ReadHeader([]string{"script-src 'sha256-AAAA'"}, 0)
		o := testOpts()
		o.Inline, o.CSP = true, &pg
		out, st := run(t, `<html><head></head><body>`+c.tag+`"`+url+`"</script></body></html>`, o)
		if kept := strings.Contains(out, url); kept != c.kept || (st.CSPKept == 1) != c.kept {
			t.Errorf("%s: kept %v (counted %d), want %v:\n%s", c.tag, kept, st.CSPKept, c.kept, out)
		}
	}
}

// TestMetaPolicyWithEncodedHTTPEquivIsRead: a <meta> whose http-equiv
// spells "content-security-policy" with character references is a policy
// to the browser (the tokenizer decodes attribute values; Chromium blocks
// by it), but the rewrite did not read it, so the start script it allows
// by hash was rewritten and blocked.
func TestMetaPolicyWithEncodedHTTPEquivIsRead(t *testing.T) {
	for _, equiv := range []string{"content-security&#45;policy", "&#x43;ONTENT-security-policy", "content&#x2d;security&#x2D;policy"} {
		page := strings.Replace(sveltePage(true, ""), `http-equiv="content-security-policy"`, `http-equiv="`+equiv+`"`, 1)
		out, st := run(t, page, cspOpts(t, &csp.Page{}))
		m := startScriptRE.FindStringSubmatch(out)
		if m == nil || m[1] != svelteStart {
			t.Errorf("%s: the start script changed, its hash with it:\n%s", equiv, out)
		}
		if st.CSPMetaChanged != 1 || !strings.Contains(out, `http-equiv="`+equiv+`"`) || !strings.Contains(out, csp.LoaderHash) {
			t.Errorf("%s: the policy was not given the loader's hash as it is spelled:\n%s", equiv, out)
		}
	}
}

// TestAdFreePagePolicyLeftUntouched: on a page that gets no ad-slots and
// no bids script (an ad-free request: the bundle tag alone), a <meta>
// policy read while the head injection was still held (no charset
// declaration yet, or before <head>) was given the loader's hash, as if
// an inline script were to come. It is left as it is now; the eligible
// page's is still given it.
func TestAdFreePagePolicyLeftUntouched(t *testing.T) {
	meta := `<meta http-equiv="content-security-policy" content="script-src 'self' ` + sha256Source(svelteStart) + `">`
	body := "<body><script>" + svelteStart + "</script></body></html>"
	for _, page := range []string{
		"<!doctype html><html><head>" + meta + "</head>" + body, // held: no charset declaration
		"<!doctype html><html>" + meta + "<head></head>" + body, // before <head>
		"<!doctype html><html><head>" + meta + "<meta charset=utf-8></head>" + body,
	} {
		for _, eligible := range []bool{false, true} {
			o := cspOpts(t, &csp.Page{})
			if !eligible {
				o.HeadPrepend, o.BodyEnd = BundleTag("00"), nil
			}
			out, st := run(t, page, o)
			changed := !strings.Contains(out, meta)
			if changed != eligible || st.CSP.Loader != eligible || (st.CSPMetaChanged == 1) != eligible {
				t.Errorf("eligible %v: policy changed %v, loader %v:\n%s", eligible, changed, st.CSP.Loader, out)
			}
			if m := startScriptRE.FindStringSubmatch(out); m == nil || m[1] != svelteStart {
				t.Errorf("eligible %v: the start script changed:\n%s", eligible, out)
			}
		}
	}
}
