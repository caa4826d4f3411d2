package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/edge"
)

// TestREADMEBuiltinEdgeChoiceIsTheEdges catches README's row for
// platform.delivery_compression = "builtin" stating another choice of
// coding than the edge makes (it said br "when the client accepts it at
// least as much as gzip"; the edge picks br whenever br is accepted): each
// "`ACCEPT-ENCODING` gets CODING" example of the row is sent to the edge.
func TestREADMEBuiltinEdgeChoiceIsTheEdges(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "| `builtin` (default) |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("README.md has no row for platform.delivery_compression = \"builtin\"")
	}
	examples := regexp.MustCompile("`([^`]+)` gets (br|gzip|identity)").FindAllStringSubmatch(row, -1)
	if len(examples) == 0 {
		t.Fatalf("README's builtin row gives no \"`Accept-Encoding` gets coding\" example to check:\n%s", row)
	}
	page := strings.Repeat("<p>a page long enough to compress</p>\n", 100)
	e, err := edge.FromConfig(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Compress-Hint", "on")
		_, _ = w.Write([]byte(page))
	}), config.Defaults().Delivery)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept-Encoding", ex[1])
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		got := rec.Header().Get("Content-Encoding")
		if got == "" {
			got = "identity"
		}
		if got != ex[2] {
			t.Errorf("README: `%s` gets %s; the edge answers %s", ex[1], ex[2], got)
		}
	}
}

// TestBehaviourModeParameterExampleReachesTheOrigin catches behaviour.md's
// "Origin request" saying another thing of the mode parameter than the
// daemon does (it said the query was re-encoded; the other pairs are kept
// byte for byte): its example query is sent through a daemon with
// diagnostics on, and the origin must receive the query it states.
func TestBehaviourModeParameterExampleReachesTheOrigin(t *testing.T) {
	data, err := os.ReadFile("../../docs/behaviour.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("\\(`\\?([^`]+)` reaches the origin as `\\?([^`]*)`").FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("behaviour.md gives no \"(`?QUERY` reaches the origin as `?QUERY`\" example of the mode parameter")
	}
	sent, want := m[1], m[2]
	got := make(chan string, 1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.RawQuery
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body><p>page</p></body></html>"))
	}))
	t.Cleanup(origin.Close)
	front := measureDaemon(t, origin.URL, func(c *config.Config) { c.Debug.DiagnosticsHeaders = true })
	req, err := http.NewRequest(http.MethodGet, front.URL+"/a?"+sent, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = measureDomain
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case q := <-got:
		if q != want {
			t.Errorf("behaviour.md: ?%s reaches the origin as ?%s; it received ?%s", sent, want, q)
		}
	default:
		t.Fatalf("the origin got no request (status %d)", resp.StatusCode)
	}
}

// goTestCommands are the `go test` commands of text, each with the folder
// it runs in ("" for the repository's root, "deploy" for `(cd deploy &&
// go test ...)`) and without its -timeout, which CI adds.
func goTestCommands(text string) []string {
	var out []string
	re := regexp.MustCompile(`(?:\(cd ([a-z/]+) && )?go test ([^)&\n]*)`)
	timeout := regexp.MustCompile(`\s*-timeout \S+`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1]+": go test "+strings.TrimSpace(timeout.ReplaceAllString(m[2], "")))
	}
	return out
}

// TestREADMETestCommandIsCIs catches README's "Test it" command and
// .ci/run's test run going apart, as they would have when deploy/ became a
// module of its own and `go test ./...` stopped reaching its tests: every
// `go test` of the command is one CI runs, in the same folder.
func TestREADMETestCommandIsCIs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Test it\n")
	if !ok {
		t.Fatal(`README.md has no "## Test it" section`)
	}
	var block []string
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "    ") {
			block = append(block, line)
		} else if len(block) > 0 {
			break
		}
	}
	readmeRuns := goTestCommands(strings.Join(block, "\n"))
	ciRuns := goTestCommands(string(ci))
	if len(readmeRuns) < 2 {
		t.Fatalf("README's test command runs %q; want the root's tests and deploy/'s", readmeRuns)
	}
	for _, run := range readmeRuns {
		if !slices.Contains(ciRuns, run) {
			t.Errorf("README's test command runs %q; .ci/run does not (it runs %q)", run, ciRuns)
		}
	}
	if !slices.Contains(readmeRuns, "deploy: go test -race -count=1 ./...") {
		t.Errorf("README's test command does not run deploy/'s tests: %q", readmeRuns)
	}
}
