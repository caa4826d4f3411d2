package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// notServed are import paths (a path or its prefix followed by /) that
// ssatd, the binary that serves, must not link: the browser tooling of
// ssatd-measure -browser and the terminal libraries of a progress bar.
var notServed = []string{
	"github.com/chromedp/chromedp",
	"github.com/chromedp/cdproto",
	"github.com/schollz/progressbar",
	"golang.org/x/term",
	"github.com/ssatd/ssatd/internal/measure/chromium",
}

// importChain is how main reaches pkg in graph (package → its imports), as
// "a → b → c", for a failure to say which import brings pkg in.
func importChain(graph map[string][]string, main, pkg string) string {
	from := map[string]string{main: ""}
	queue := []string{main}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == pkg {
			chain := []string{p}
			for q := from[p]; q != ""; q = from[q] {
				chain = append([]string{q}, chain...)
			}
			return strings.Join(chain, " → ")
		}
		for _, next := range graph[p] {
			if _, seen := from[next]; !seen {
				from[next] = p
				queue = append(queue, next)
			}
		}
	}
	return pkg
}

// TestServingBinaryLinksNoBrowserTooling catches ssatd (what the image and
// `go install ./cmd/ssatd` build) linking chromedp, cdproto or a progress
// bar's terminal libraries again, as it did through `ssatd measure`:
// -browser lives in cmd/ssatd-measure.
func TestServingBinaryLinksNoBrowserTooling(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("listing the binary's packages needs the go command in PATH: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	graph := map[string][]string{}
	var pkgs []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		graph[f[0]] = f[1:]
		pkgs = append(pkgs, f[0])
	}
	const main = "github.com/ssatd/ssatd/cmd/ssatd"
	if _, ok := graph[main]; !ok || len(pkgs) < 50 {
		t.Fatalf("go list -deps listed %d packages, without %s", len(pkgs), main)
	}
	for _, p := range pkgs {
		for _, bad := range notServed {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("ssatd links %s: %s", p, importChain(graph, main, p))
			}
		}
	}
}

// TestRootModuleHasNoDeployDependencies catches the Kubernetes and Compose
// libraries that deploy/'s tests read their files with coming back into
// ssatd's go.mod, from where every user of ssatdtest would inherit them:
// deploy/ is a module of its own.
func TestRootModuleHasNoDeployDependencies(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "module github.com/ssatd/ssatd\n") {
		t.Fatalf("../../go.mod is not ssatd's:\n%s", data)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		for _, mod := range []string{"k8s.io/", "sigs.k8s.io/", "github.com/compose-spec/"} {
			if strings.HasPrefix(strings.TrimSpace(line), mod) {
				t.Errorf("go.mod requires %s; deploy/go.mod is where deploy/'s tests' modules go", strings.TrimSpace(line))
			}
		}
	}
	if _, err := os.Stat("../../deploy/go.mod"); err != nil {
		t.Errorf("deploy/ is no module of its own: %v", err)
	}
}
