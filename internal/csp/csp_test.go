package csp

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const all = PendingBundle | PendingInline

// TestPolicyRules: what each policy form makes of the injections and the
// rewrite, the header's text after it included (CSP3, "does a source list
// allow all inline behavior for type", "get the effective directive for
// inline checks").
func TestPolicyRules(t *testing.T) {
	L := " '" + LoaderHash + "'"
	for _, c := range []struct {
		name    string
		header  string
		want    string // the header after; "" for unchanged
		nonce   string
		keep    Keep
		loader  bool
		inline  bool // InlineBlocked
		bundle  bool // BundleBlocked
		pending Pending
	}{
		{name: "nonce", header: "script-src 'self' 'nonce-abc='", nonce: "abc="},
		{name: "nonce with strict-dynamic", header: "script-src 'strict-dynamic' 'nonce-abc'", nonce: "abc"},
		{name: "hash only", header: "script-src 'self' 'sha256-AAAA'", want: "script-src 'self' 'sha256-AAAA'" + L, keep: KeepScripts, loader: true},
		{name: "hash in script-src-elem", header: "script-src 'self'; script-src-elem 'self' 'sha384-AAAA' ; img-src *",
			want: "script-src 'self'; script-src-elem 'self' 'sha384-AAAA'" + L + " ; img-src *", keep: KeepScripts, loader: true},
		{name: "default-src keeps governing styles", header: "default-src 'self' 'sha256-AAAA'",
			want: "default-src 'self' 'sha256-AAAA'; script-src 'self' 'sha256-AAAA'" + L, keep: KeepScripts | KeepStyles, loader: true},
		{name: "no inline at all", header: "script-src 'self'", want: "script-src 'self'" + L, loader: true},
		{name: "unsafe-inline", header: "script-src 'self' 'unsafe-inline'"},
		{name: "unsafe-inline ignored beside a hash", header: "script-src 'unsafe-inline' 'sha256-AAAA'",
			want: "script-src 'unsafe-inline' 'sha256-AAAA'" + L, keep: KeepScripts, loader: true, bundle: true},
		{name: "none", header: "script-src 'none'", inline: true, bundle: true},
		{name: "strict-dynamic hash", header: "script-src 'strict-dynamic' 'sha256-AAAA'",
			want: "script-src 'strict-dynamic' 'sha256-AAAA'" + L, keep: KeepScripts, loader: true, bundle: true},
		{name: "handlers by hash", header: "script-src 'unsafe-inline'; script-src-attr 'unsafe-hashes' 'sha256-AAAA'", keep: KeepHandlers, bundle: true},
		{name: "handler hash without unsafe-hashes", header: "script-src 'unsafe-inline'; script-src-attr 'sha256-AAAA'", bundle: true},
		{name: "style hash", header: "style-src 'sha256-AAAA'", keep: KeepStyles},
		{name: "two policies, one nonce", header: "script-src 'nonce-n1', script-src 'self'",
			want: "script-src 'nonce-n1', script-src 'self'" + L, nonce: "n1", loader: true},
		{name: "not governing scripts", header: "img-src 'self'; frame-ancestors 'none'"},
		{name: "first directive counts", header: "script-src 'unsafe-inline'; script-src 'sha256-AAAA'", bundle: true},
		{name: "nothing pending", header: "script-src 'self' 'sha256-AAAA'", keep: KeepScripts, pending: PendingBundle},
		{name: "bad nonce is no nonce", header: "script-src 'nonce-a\"b'", want: "script-src 'nonce-a\"b'" + L, loader: true, bundle: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.pending
			if p == 0 {
				p = all
			}
			var pg Page
			vals := []string{c.header}
			changed := pg.ReadHeader(vals, p)
			want := c.want
			if want == "" {
				want = c.header
			}
			if vals[0] != want || changed != (want != c.header) {
				t.Errorf("header %q (changed %v), want %q", vals[0], changed, want)
			}
			if pg.Nonce != c.nonce || pg.Keep != c.keep || pg.Loader != c.loader || pg.InlineBlocked != c.inline || pg.BundleBlocked != c.bundle {
				t.Errorf("got %+v", pg)
			}
		})
	}
}

// TestMetaPolicyCommasSplitAsChromiumDoes: Chromium and Safari read a
// <meta> policy's commas as a list of policies, each enforced
// (whatwg/html#5102). ssatd read one policy, where "'sha256-AAAA'," is no
// hash: the script it allows was rewritten, and the injected scripts took
// the nonce of the second policy alone, which the first blocks. Now the
// first keeps the scripts and gets the loader's hash (before its comma),
// and an empty content is still no policy.
func TestMetaPolicyCommasSplitAsChromiumDoes(t *testing.T) {
	var pg Page
	if out := pg.ReadMeta("", all); out != "" || pg.On() {
		t.Errorf("an empty content was read as a policy: %+v", pg)
	}
	in := "script-src 'self' 'sha256-AAAA', script-src 'nonce-x'"
	out := pg.ReadMeta(in, all)
	want := "script-src 'self' 'sha256-AAAA' '" + LoaderHash + "', script-src 'nonce-x'"
	if out != want || pg.Nonce != "x" || !pg.Loader || pg.Keep != KeepScripts || pg.Policies != 2 {
		t.Errorf("got %q, %+v; want %q", out, pg, want)
	}
}

// FuzzReadPolicy: any header value is read without a panic; the loader's
// hash is added at most once per policy, only as a whole source expression,
// and a policy given it reads unchanged the second time.
func FuzzReadPolicy(f *testing.F) {
	for _, s := range []string{
		"script-src 'self' 'sha256-AAAA'", "default-src 'self'", "default-src 'self';",
		"script-src 'nonce-abc'", "script-src 'none'", "script-src-elem 'self'; script-src 'unsafe-inline'",
		"script-src 'self', default-src 'self' 'sha384-x'", " ; ;script-src\t'self'\n", "SCRIPT-SRC 'SELF' 'SHA256-a'",
		"script-src 'self' '" + LoaderHash + "'", "script-src 'self' 'SHA256-" + LoaderHash[len("sha256-"):] + "'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		var pg Page
		vals := []string{h}
		changed := pg.ReadHeader(vals, PendingBundle|PendingInline)
		if !changed {
			if vals[0] != h {
				t.Fatalf("unchanged, but %q became %q", h, vals[0])
			}
			return
		}
		added := strings.Count(vals[0], LoaderHash) - strings.Count(h, LoaderHash)
		if added < 1 || added > strings.Count(h, ",")+1 || !pg.Loader {
			t.Fatalf("%q became %q (%+v)", h, vals[0], pg)
		}
		again := []string{vals[0]}
		var pg2 Page
		if pg2.ReadHeader(again, PendingBundle|PendingInline) {
			t.Fatalf("%q was given the loader twice: %q", h, again[0])
		}
	})
}

// TestLoaderHashPresentIsNotAddedAgain: a policy that names the loader's
// hash already (any case of its algorithm) is left as it is, and the
// loader form is still used; a digest in another case is another digest.
func TestLoaderHashPresentIsNotAddedAgain(t *testing.T) {
	digest := LoaderHash[len("sha256-"):]
	for _, c := range []struct {
		policy string
		change bool
	}{
		{"script-src 'self' '" + LoaderHash + "'", false},
		{"script-src 'self' 'SHA256-" + digest + "'", false},
		{"script-src 'self' 'sha256-" + strings.ToLower(digest) + "'", digest != strings.ToLower(digest)},
	} {
		var pg Page
		vals := []string{c.policy}
		if pg.ReadHeader(vals, all) != c.change || !pg.Loader {
			t.Errorf("%q: became %q (%+v)", c.policy, vals[0], pg)
		}
	}
}

// TestPolicyOfManyDirectivesReadInLinearTime: a policy of a megabyte of
// distinct directive names ("d0 x;d1 x;…", in a header or a <meta>) took
// time quadratic in their number (each name compared with every one kept
// before it: 12 s for 350 KB). Only the directives that govern scripts
// and styles are kept now, so the list stays short whatever the policy
// holds, and the script directive after them is still read.
func TestPolicyOfManyDirectivesReadInLinearTime(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "d%d x;", i)
	}
	b.WriteString("script-src 'nonce-abc'; d0 y")
	p := parsePolicy(b.String())
	if max := len(fallbacks) * len(fallbacks[0]); len(p.dirs) > max {
		t.Fatalf("%d directives kept, at most %d govern anything", len(p.dirs), max)
	}
	var pg Page
	start := time.Now()
	pg.ReadMeta(b.String(), all)
	if pg.Nonce != "abc" {
		t.Errorf("the script directive after the others was not read: %+v", pg)
	}
	t.Logf("%d bytes read in %v", b.Len(), time.Since(start))
}
