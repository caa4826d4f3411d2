package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the module root, relative to this package.
const repoRoot = ".."

// instruction is one Dockerfile instruction with its continuation lines
// joined.
type instruction struct {
	line int    // where it starts, for messages
	cmd  string // upper case: FROM, RUN, ENV, ...
	args string
}

// stage is one FROM ... section.
type stage struct {
	from, name string
	insts      []instruction
}

// dockerfile is the parsed Dockerfile, with the few facts the tests use
// taken from the final stage.
type dockerfile struct {
	stages []stage
}

// parseDockerfile reads the subset of the Dockerfile syntax that ours uses:
// comments, backslash continuations, and one instruction per logical line.
func parseDockerfile(t *testing.T) *dockerfile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := &dockerfile{}
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		cur.Reset()
		in := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			from, name, _ := strings.Cut(in.args, " AS ")
			df.stages = append(df.stages, stage{from: strings.TrimSpace(from), name: strings.TrimSpace(name)})
			continue
		}
		if len(df.stages) == 0 {
			t.Fatalf("Dockerfile line %d: %s before FROM", in.line, in.cmd)
		}
		s := &df.stages[len(df.stages)-1]
		s.insts = append(s.insts, in)
	}
	if len(df.stages) == 0 {
		t.Fatal("Dockerfile has no FROM")
	}
	return df
}

func (df *dockerfile) final() *stage { return &df.stages[len(df.stages)-1] }

// only returns the single instruction cmd of stage s.
func (s *stage) only(t *testing.T, cmd string) instruction {
	t.Helper()
	var found []instruction
	for _, in := range s.insts {
		if in.cmd == cmd {
			found = append(found, in)
		}
	}
	if len(found) != 1 {
		t.Fatalf("Dockerfile stage %q has %d %s instructions, want 1", s.from, len(found), cmd)
	}
	return found[0]
}

// env returns the value an ENV instruction of stage s gives key.
func (s *stage) env(t *testing.T, key string) string {
	t.Helper()
	for _, in := range s.insts {
		if in.cmd != "ENV" {
			continue
		}
		if k, v, ok := strings.Cut(in.args, "="); ok && k == key {
			return strings.Trim(v, `"`)
		}
	}
	t.Fatalf("Dockerfile stage %q sets no ENV %s", s.from, key)
	return ""
}

// execForm decodes a JSON-array (exec form) argument list; the shell form
// would need a shell, which the distroless image does not have.
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(in.args), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("Dockerfile line %d: %s %s: want the exec form [\"...\"] (no shell in the image)", in.line, in.cmd, in.args)
	}
	return argv
}

// healthcheck returns the HEALTHCHECK command's argv, with its options
// (--interval and so on) dropped.
func (s *stage) healthcheck(t *testing.T) []string {
	t.Helper()
	in := s.only(t, "HEALTHCHECK")
	fields := in.args
	for strings.HasPrefix(fields, "--") {
		_, rest, _ := strings.Cut(fields, " ")
		fields = strings.TrimSpace(rest)
	}
	cmd, rest, _ := strings.Cut(fields, " ")
	if cmd != "CMD" {
		t.Fatalf("Dockerfile line %d: HEALTHCHECK %s, want HEALTHCHECK [options] CMD [...]", in.line, in.args)
	}
	return execForm(t, instruction{line: in.line, cmd: "HEALTHCHECK CMD", args: strings.TrimSpace(rest)})
}

// splitWords splits a shell command line on blanks, honouring single and
// double quotes; enough for the Dockerfile's build command, which uses no
// other shell syntax (the test fails if it does).
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune("|&;<>()`\\*?", r):
			return nil, fmt.Errorf("shell syntax %q is not supported here", r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
