package rewrite

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

// reactDir finds React's Flight server and client (SSATD_REACT, the
// directory holding node_modules/react-server-dom-webpack).
func reactDir(t *testing.T) string {
	dir := os.Getenv("SSATD_REACT")
	p := filepath.Join(dir, "node_modules", "react-server-dom-webpack", "package.json")
	if _, err := os.Stat(p); dir == "" || err != nil {
		testutil.SkipOrFail(t, "SSATD_REACT does not name a directory with node_modules/react-server-dom-webpack "+
			"(npm install --prefix DIR react@19.1.0 react-dom@19.1.0 react-server-dom-webpack@19.1.0)")
	}
	return dir
}

// flightServerScript renders a model with React's Flight server
// (renderToReadableStream) and writes the page Next.js's App Router would
// carry it in: the stream's text in pushes of argv[2] UTF-16 units,
// each JSON.stringify'd and HTML-escaped (next.js,
// use-flight-response.tsx, htmlEscapeJsonString). The long text becomes a
// text row that several pushes carry.
const flightServerScript = `
const req = require('module').createRequire(process.argv[1] + '/');
const { renderToReadableStream } = req('react-server-dom-webpack/server.edge');
(async () => {
  const origin = process.argv[2], piece = Number(process.argv[3]);
  const long = ('<p>Read <a href="https://' + origin + '/story">more</a> é 😀 //' + origin + '/i.png</p>').repeat(30);
  const model = { href: 'https://' + origin + '/x', list: ['//' + origin + '/a.png', 'plain'], text: long,
    short: 'see https://' + origin + '/s', other: long.slice(0, 1500) + 'https://' + origin + '/end' };
  const dec = new TextDecoder();
  let text = '';
  for await (const chunk of renderToReadableStream(model, {})) text += dec.decode(chunk, { stream: true });
  const esc = (s) => s.replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  let out = '<!doctype html><html><head></head><body><script>(self.__next_f=self.__next_f||[]).push([0])</script>';
  for (let i = 0; i < text.length; ) {
    let j = Math.min(text.length, i + piece);
    if (j < text.length && text.charCodeAt(j - 1) >= 0xd800 && text.charCodeAt(j - 1) < 0xdc00) j++;
    out += '<script>self.__next_f.push([1,' + esc(JSON.stringify(text.slice(i, j))) + '])</script>\n<div>x</div>';
    i = j;
  }
  process.stdout.write(out + '</body></html>');
})();
`

// flightClientScript reads a page's pushes as Next.js's client does (each
// string's UTF-8 bytes into one stream; app-index.tsx) and prints the
// model React's Flight client (createFromReadableStream) makes of them.
const flightClientScript = `
const req = require('module').createRequire(process.argv[1] + '/');
const { createFromReadableStream } = req('react-server-dom-webpack/client.edge');
(async () => {
  let page = '';
  for await (const c of process.stdin) page += c;
  const enc = new TextEncoder();
  const re = /<script>self\.__next_f\.push\(\[1,("(?:[^"\\]|\\.)*")\]\)<\/script>/g;
  const chunks = [...page.matchAll(re)].map((m) => enc.encode(JSON.parse(m[1])));
  const stream = new ReadableStream({ start(c) { for (const x of chunks) c.enqueue(x); c.close(); } });
  const model = await createFromReadableStream(stream,
    { serverConsumerManifest: { moduleMap: {}, serverModuleMap: null, moduleLoading: null } });
  process.stdout.write(JSON.stringify(model));
})().catch((e) => { process.stdout.write('error: ' + e.message); });
`

func runNode(t *testing.T, node, dir, script, stdin string, args ...string) string {
	t.Helper()
	argv := []string{"-e", script, dir}
	if script == flightServerScript {
		argv = append([]string{"--conditions", "react-server"}, argv...)
	}
	cmd := exec.Command(node, append(argv, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	return string(out)
}

// TestFlightWithReactsClient: React's own Flight client reads a Next.js
// page rewritten by ssatd as the model the server rendered, with the
// request host in every URL, however the pushes cut the text rows. As a
// control, the same page with its host replaced and the lengths left as
// they were is not read so.
func TestFlightWithReactsClient(t *testing.T) {
	dir := reactDir(t)
	node := testutil.RequireTool(t, "node")
	to := strings.NewReplacer("https://origin.pub.example", "https://www.pub.example", "//origin.pub.example", "//www.pub.example")
	for _, piece := range []int{97, 300, 1000, 100000} {
		t.Run(strconv.Itoa(piece), func(t *testing.T) {
			page := runNode(t, node, dir, flightServerScript, "", "origin.pub.example", strconv.Itoa(piece))
			before := runNode(t, node, dir, flightClientScript, page)
			if !strings.Contains(before, `"href":"https://origin.pub.example/x"`) {
				t.Fatalf("the client read the page before the rewrite as %.300q", before)
			}
			out, st := rewriteInline(t, page, true, nil)
			if st.InlineRewritten == 0 || strings.Contains(out, "origin.pub.example") {
				t.Fatalf("%d references rewritten; origin left in %.300q", st.InlineRewritten, out)
			}
			if after, want := runNode(t, node, dir, flightClientScript, out), to.Replace(before); after != want {
				t.Fatalf("React read the rewritten page as\n%.400q\nwant\n%.400q", after, want)
			}
			naive := strings.ReplaceAll(page, "origin.pub.example", "www.pub.example")
			if got := runNode(t, node, dir, flightClientScript, naive); got == to.Replace(before) {
				t.Fatal("the control: React read a page whose text rows kept their old lengths as the model")
			}
		})
	}
}
