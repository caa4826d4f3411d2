package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The ssatd binary, built once for the tests that run it as a process.
var built struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func ssatdBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "ssatd-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "ssatd")
		built.out, built.err = exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}

// process is a running ssatd command.
type process struct {
	cmd   *exec.Cmd
	lines chan string // stderr, line by line; closed at EOF
	done  chan error  // the exit, once
}

// startProcess runs ssatd with args; t.Cleanup kills it if it is still
// running.
func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	cmd := exec.Command(ssatdBinary(t), args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stderr)
		close(p.lines)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range p.lines {
		}
	})
	return p
}

// waitLine returns the first stderr line containing s, failing the test
// if the process ends first.
func (p *process) waitLine(t *testing.T, s string) string {
	t.Helper()
	var seen []string
	for l := range p.lines {
		if strings.Contains(l, s) {
			return l
		}
		seen = append(seen, l)
	}
	t.Fatalf("ssatd ended without logging %q:\n%s", s, strings.Join(seen, "\n"))
	return ""
}

// wait drains stderr and returns the exit.
func (p *process) wait() error {
	for range p.lines {
	}
	return <-p.done
}
