package rewrite

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/ssatd/ssatd/internal/testutil"
)

// inlineRequestHost is the client-facing host of the corpus tests.
const inlineRequestHost = "first-party.test"

// corpusOrigin guesses a corpus page's origin host: the host its absolute
// URLs name most often.
func corpusOrigin(page []byte) string {
	counts := map[string]int{}
	best := ""
	for _, m := range regexp.MustCompile(`https?://([A-Za-z0-9.-]+\.[A-Za-z]{2,})[/"']`).FindAllSubmatch(page, -1) {
		h := strings.ToLower(string(m[1]))
		counts[h]++
		if counts[h] > counts[best] {
			best = h
		}
	}
	return best
}

// pageScripts returns the text of every script of the page, by
// golang.org/x/net/html's tokenizer, with its type attribute.
func pageScripts(page []byte) (types, texts []string) {
	z := html.NewTokenizer(bytes.NewReader(page))
	typ, in := "", false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return types, texts
		case html.StartTagToken:
			name, more := z.TagName()
			in, typ = string(name) == "script", ""
			for more && in {
				var k, v []byte
				k, v, more = z.TagAttr()
				if string(k) == "type" {
					typ = strings.ToLower(strings.TrimSpace(string(v)))
				}
			}
		case html.TextToken:
			if in {
				types, texts = append(types, typ), append(texts, string(z.Text()))
			}
		default:
			in = false
		}
	}
}

func isJSONScript(typ string) bool {
	return strings.HasSuffix(typ, "json") || typ == "importmap" || typ == "speculationrules"
}

func isJSScript(typ string) bool {
	return typ == "" || typ == "module" || typ == "text/javascript" || typ == "application/javascript"
}

// TestCorpusInlineJSONStaysValid: on every corpus page, rewritten with its
// own origin host, each JSON script that parsed before parses after, and
// no scheme-qualified or protocol-relative origin URL is left in any JSON
// or JavaScript script.
func TestCorpusInlineJSONStaysValid(t *testing.T) {
	files := testutil.RequireCorpus(t)
	var parsed, rewritten, namedBefore int
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		origin := corpusOrigin(page)
		var out bytes.Buffer
		st, err := Rewrite(&out, bytes.NewReader(page), &Options{OriginHost: origin, RequestHost: inlineRequestHost, RequestScheme: "https", Inline: true})
		if err != nil {
			t.Fatal(err)
		}
		rewritten += st.InlineRewritten
		bt, bs := pageScripts(page)
		at, as := pageScripts(out.Bytes())
		if len(bs) != len(as) {
			t.Fatalf("%s: %d scripts before, %d after", filepath.Base(f), len(bs), len(as))
		}
		left := regexp.MustCompile(`(?i)(://|:\\/\\/|^//|[^:]//)` + regexp.QuoteMeta(origin) + `([/"'\\?#)\s]|$)`)
		for i := range bs {
			if at[i] != bt[i] {
				t.Fatalf("%s: script %d type %q became %q", filepath.Base(f), i, bt[i], at[i])
			}
			if isJSONScript(bt[i]) && json.Valid([]byte(strings.TrimSpace(bs[i]))) {
				parsed++
				if !json.Valid([]byte(strings.TrimSpace(as[i]))) {
					t.Errorf("%s: JSON script %d (%s) no longer parses", filepath.Base(f), i, bt[i])
				}
			}
			if (isJSONScript(bt[i]) || isJSScript(bt[i])) && origin != "" && left.MatchString(bs[i]) {
				namedBefore++
			}
			if (isJSONScript(bt[i]) || isJSScript(bt[i])) && origin != "" && left.MatchString(as[i]) {
				t.Errorf("%s: script %d still names %s: %q", filepath.Base(f), i, origin, left.FindString(as[i]))
			}
		}
	}
	if parsed == 0 || rewritten == 0 || namedBefore == 0 {
		t.Fatalf("the corpus exercised nothing: %d JSON scripts, %d inline rewrites, %d scripts naming the origin", parsed, rewritten, namedBefore)
	}
	t.Logf("%d JSON scripts valid before and after; %d scripts named the origin, %d inline references rewritten", parsed, namedBefore, rewritten)
}

// acornPath finds acorn (SSATD_ACORN, the directory holding
// node_modules/acorn), which the token test runs under node.
func acornPath(t *testing.T) string {
	dir := os.Getenv("SSATD_ACORN")
	p := filepath.Join(dir, "node_modules", "acorn", "dist", "acorn.js")
	if _, err := os.Stat(p); dir == "" || err != nil {
		testutil.SkipOrFail(t, "SSATD_ACORN does not name a directory with node_modules/acorn (npm install --prefix DIR acorn@8)")
	}
	return p
}

// tokenScript compares, for each pair of scripts, acorn's token sequences:
// the same token types in the same order, with only string, template and
// regular-expression tokens allowed to differ in value.
const tokenScript = `
const acorn = require(process.argv[1]);
const pairs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
let bad = [], checked = 0;
const toks = (src, module) => { const out = [];
  for (const t of acorn.tokenizer(src, {ecmaVersion: 'latest', sourceType: module ? 'module' : 'script', allowHashBang: true}))
    out.push([t.type.label, String(t.value)]);
  return out; };
for (const [i, module, a, b] of pairs) {
  let ta; try { ta = toks(a, module); } catch (e) { continue; }
  checked++;
  let tb; try { tb = toks(b, module); } catch (e) { bad.push(i + ': rewritten script does not tokenize: ' + e.message); continue; }
  if (ta.length !== tb.length) { bad.push(i + ': ' + ta.length + ' tokens before, ' + tb.length + ' after'); continue; }
  for (let k = 0; k < ta.length; k++) {
    if (ta[k][0] !== tb[k][0]) { bad.push(i + ': token ' + k + ' ' + ta[k][0] + ' became ' + tb[k][0]); break; }
    if (ta[k][1] !== tb[k][1] && !['string', 'template', 'regexp'].includes(ta[k][0])) { bad.push(i + ': ' + ta[k][0] + ' ' + ta[k][1] + ' became ' + tb[k][1]); break; }
  }
}
console.log(JSON.stringify({checked, bad}));
`

// TestCorpusInlineScriptsKeepTokens: every corpus page's JavaScript that
// acorn tokenizes before the rewrite has the same token sequence after it,
// apart from the values of string, template and regular-expression tokens.
func TestCorpusInlineScriptsKeepTokens(t *testing.T) {
	files := testutil.RequireCorpus(t)
	node := testutil.RequireTool(t, "node", "nodejs")
	acorn := acornPath(t)
	var pairs [][4]any
	changed := 0
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := Rewrite(&out, bytes.NewReader(page), &Options{OriginHost: corpusOrigin(page), RequestHost: inlineRequestHost, RequestScheme: "https", Inline: true}); err != nil {
			t.Fatal(err)
		}
		bt, bs := pageScripts(page)
		_, as := pageScripts(out.Bytes())
		for i := range bs {
			if isJSScript(bt[i]) && i < len(as) && bs[i] != as[i] {
				pairs = append(pairs, [4]any{filepath.Base(f) + "#" + itoa(i), bt[i] == "module", bs[i], as[i]})
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("no corpus script was rewritten: the test checks nothing")
	}
	in, _ := json.Marshal(pairs)
	cmd := exec.Command(node, "-e", tokenScript, acorn)
	cmd.Stdin = bytes.NewReader(in)
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var res struct {
		Checked int
		Bad     []string
	}
	if err := json.Unmarshal(outb, &res); err != nil {
		t.Fatalf("node output %q: %v", outb, err)
	}
	for _, b := range res.Bad {
		t.Error(b)
	}
	if res.Checked == 0 {
		t.Fatalf("acorn tokenized none of the %d rewritten scripts", changed)
	}
	t.Logf("%d rewritten scripts, %d tokenized by acorn, same tokens after", changed, res.Checked)
}
