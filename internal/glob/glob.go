// Package glob matches URL paths against segment-wise glob patterns.
//
// A pattern is split on "/" exactly like the path it is matched against.
// A segment that is exactly "**" stands for zero or more whole path
// segments; every other segment uses path.Match syntax and therefore never
// crosses a "/".
package glob

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Glob is a compiled pattern. It is immutable and safe for concurrent use.
type Glob struct {
	pattern  string
	segments []segment
}

type segmentKind uint8

const (
	literal segmentKind = iota
	wildcard
	doubleStar
)

type segment struct {
	kind segmentKind
	text string
}

// Compile parses pattern and reports malformed patterns up front, so that
// Match never has to deal with path.ErrBadPattern at request time.
func Compile(pattern string) (*Glob, error) {
	if pattern == "" {
		return nil, errors.New("glob: empty pattern, expected a path starting with \"/\"")
	}
	if !strings.HasPrefix(pattern, "/") {
		return nil, fmt.Errorf("glob: pattern %q must start with \"/\"", pattern)
	}
	parts := strings.Split(pattern, "/")
	segs := make([]segment, 0, len(parts))
	for i, p := range parts {
		switch {
		case p == "**":
			// Adjacent "**" segments are equivalent to one; collapsing them
			// keeps the state set small without changing what matches.
			if n := len(segs); n > 0 && segs[n-1].kind == doubleStar {
				continue
			}
			segs = append(segs, segment{kind: doubleStar})
		case hasUnescapedDoubleStar(p):
			return nil, fmt.Errorf("glob: pattern %q: segment %d (%q) mixes \"**\" with other characters; \"**\" must be a whole segment", pattern, i, p)
		case strings.ContainsAny(p, `*?[\`):
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("glob: pattern %q: segment %d (%q): %w", pattern, i, p, err)
			}
			segs = append(segs, segment{kind: wildcard, text: p})
		default:
			segs = append(segs, segment{kind: literal, text: p})
		}
	}
	return &Glob{pattern: pattern, segments: segs}, nil
}

// hasUnescapedDoubleStar ignores stars that are escaped or inside a
// character class, because those are literal characters to path.Match and
// not a misplaced "**".
func hasUnescapedDoubleStar(seg string) bool {
	inClass := false
	prevStar := false
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c == '\\':
			i++
			prevStar = false
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			prevStar = false
		case c == '*':
			if prevStar {
				return true
			}
			prevStar = true
		default:
			prevStar = false
		}
	}
	return false
}

// Match reports whether urlPath matches the pattern.
//
// It simulates the pattern as an NFA over segments, keeping the set of
// pattern positions reachable after each path segment. That bounds the work
// to O(len(pattern segments) * len(path segments)) no matter how many "**"
// the pattern holds, where naive backtracking would be exponential.
func (g *Glob) Match(urlPath string) bool {
	n := len(g.segments)
	cur := make([]bool, n+1)
	next := make([]bool, n+1)
	cur[0] = true
	g.closure(cur)

	rest := urlPath
	for more := true; more; {
		var seg string
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			seg, more = rest, false
		}
		alive := false
		clear(next)
		for j := 0; j < n; j++ {
			if !cur[j] {
				continue
			}
			s := g.segments[j]
			switch s.kind {
			case doubleStar:
				next[j] = true
				alive = true
			case literal:
				if s.text == seg {
					next[j+1] = true
					alive = true
				}
			case wildcard:
				// Compile already proved the pattern well-formed, so the
				// error can only be nil here.
				if ok, _ := path.Match(s.text, seg); ok {
					next[j+1] = true
					alive = true
				}
			}
		}
		if !alive {
			return false
		}
		g.closure(next)
		cur, next = next, cur
	}
	return cur[n]
}

// closure lets a "**" match zero segments by making the position after it
// reachable too.
func (g *Glob) closure(states []bool) {
	for j, s := range g.segments {
		if states[j] && s.kind == doubleStar {
			states[j+1] = true
		}
	}
}

// String returns the pattern as given to Compile.
func (g *Glob) String() string {
	return g.pattern
}
