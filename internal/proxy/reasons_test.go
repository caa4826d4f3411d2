package proxy

import (
	"bytes"
	"compress/gzip"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// knownReasons maps every reason's name to the reason.
func knownReasons(t *testing.T) map[string]reason {
	t.Helper()
	m := map[string]reason{}
	for r := reasonNone + 1; r < reasonCount; r++ {
		name := r.String()
		if !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(name) {
			t.Fatalf("reason %d has name %q, want a lower-case token", r, name)
		}
		if prev, dup := m[name]; dup {
			t.Fatalf("reasons %d and %d share the name %q", prev, r, name)
		}
		m[name] = r
	}
	return m
}

// errorsSectionReasons reads the reason column of docs/behaviour.md's
// "Errors" table: every backticked lower-case token in it.
func errorsSectionReasons(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "behaviour.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n## Errors\n")
	if !ok {
		t.Fatal(`docs/behaviour.md has no "## Errors" section`)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	token := regexp.MustCompile("`([a-z0-9_]+)`")
	out := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[3]) == "`reason`" {
			continue
		}
		rows++
		for _, m := range token.FindAllStringSubmatch(cells[3], -1) {
			out[m[1]] = true
		}
	}
	if rows < 10 {
		t.Fatalf("read %d rows of the Errors table; the table's layout changed", rows)
	}
	return out
}

// TestReasonsDocumented: every reason the guest can log or count is in the
// reason column of docs/behaviour.md's "Errors" table, and the column names
// no reason the guest does not have.
func TestReasonsDocumented(t *testing.T) {
	known := knownReasons(t)
	documented := errorsSectionReasons(t)
	for name := range known {
		if !documented[name] {
			t.Errorf("reason %s is not in docs/behaviour.md's Errors table", name)
		}
	}
	for name := range documented {
		if _, ok := known[name]; !ok {
			t.Errorf("docs/behaviour.md's Errors table names reason %s, which the guest does not have", name)
		}
	}
}

// TestFailureMetricFedOnlyByRecordFailure reads the package's own source:
// the failures metric is called in one place, recordFailureLocked (under
// recordFailure), with a
// reason's String, and no code makes a reason out of a number, so the
// metric's reason label can only be one of reasonNames.
func TestFailureMetricFedOnlyByRecordFailure(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "reason" {
						t.Errorf("%s: %s converts a value to reason; use a constant", fset.Position(call.Pos()), fn.Name.Name)
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" {
						t.Errorf("%s: %s converts a value to family.Reason; use a constant", fset.Position(call.Pos()), fn.Name.Name)
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Failure" {
						calls = append(calls, fn.Name.Name)
						if !isStringCall(call.Args[0]) {
							t.Errorf("%s: the failures metric's reason is not a reason's String()", fset.Position(call.Pos()))
						}
					}
					return true
				})
			}
		}
	}
	for _, c := range calls {
		if c != "recordFailureLocked" {
			t.Errorf("%s counts a failure itself; only recordFailure(Locked) may", c)
		}
	}
	if len(calls) == 0 {
		t.Fatal("no call to the failures metric found: the check reads nothing")
	}
}

// isStringCall reports whether e is a call of a String method, x.String().
func isStringCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "String" && len(call.Args) == 0
}

// TestFailuresMetricSeesOnlyKnownReasons drives a guest through failures of
// every stage over real HTTP and reads its /metrics registry: each expected
// reason was counted once, and no reason label is outside reasonNames.
func TestFailuresMetricSeesOnlyKnownReasons(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(bytes.Repeat([]byte("<p>page</p>"), 1<<12))
	_ = zw.Close()
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		case "/partial":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Range", "bytes 0-1/10")
			w.WriteHeader(http.StatusPartialContent)
			_, _ = w.Write([]byte("<h"))
		case "/truncated":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gz.Bytes()[:gz.Len()/2])
		}
	}))
	want := map[reason]bool{reasonOrigin304: true, reasonPartialContent: true, reasonTruncated: true, reasonLoop: true}
	for _, p := range []string{"/304", "/partial", "/truncated"} {
		if resp, _, err := e.get(t, p, navigate, header("Accept-Encoding", "identity")); err == nil && resp.StatusCode < 500 {
			t.Errorf("%s: status %d, want a 5xx", p, resp.StatusCode)
		}
	}
	if resp, _, err := e.get(t, "/loop", header("CDN-Loop", "x, "+e.guest.cdnLoop)); err != nil || resp.StatusCode != http.StatusLoopDetected {
		t.Errorf("loop: %v, %v", resp, err)
	}
	// Refusals that are not failures: logged with a reason, never counted.
	conn, err := net.Dial("tcp", e.front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = conn.Write([]byte("POST /te HTTP/1.1\r\nHost: " + testDomain + "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"))
	buf := make([]byte, 512)
	if n, _ := conn.Read(buf); !bytes.Contains(buf[:n], []byte(" 411 ")) {
		t.Errorf("chunked request: got %q, want 411", buf[:n])
	}
	e.accessLine(t, 5)

	families, err := e.guest.Metrics().Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	known := knownReasons(t)
	seen := map[reason]float64{}
	for _, mf := range families {
		if mf.GetName() != "ssatd_failures_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "reason" {
					continue
				}
				r, ok := known[l.GetValue()]
				if !ok {
					t.Errorf("ssatd_failures_total has reason %q, which is not a reason", l.GetValue())
				}
				seen[r] += m.GetCounter().GetValue()
			}
		}
	}
	for r := range want {
		if seen[r] != 1 {
			t.Errorf("%s counted %v times, want 1", r, seen[r])
		}
	}
	for r, n := range seen {
		if !want[r] {
			t.Errorf("%s counted %v times, want 0", r, n)
		}
	}
}
