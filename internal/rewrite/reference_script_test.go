package rewrite

import (
	"bufio"
	"errors"
	"io"
)

// A script's text for the reference rewriter, read by the script data
// states of the HTML Living Standard (§13.2.5.4 and §13.2.5.15–31) rather
// than by the Tokenizer, which departs from them in one transition: in
// the script data escaped less-than sign state, a character other than
// "/" or a letter goes back to the script data escaped state (§13.2.5.23),
// where the Tokenizer goes back to plain script data. Part of the
// reference (independence_test.go): nothing here comes from the scanner.

// The script data states, by the standard's names.
const (
	refScriptData = iota
	refEscaped
	refEscapedDash
	refEscapedDashDash
	refDoubleEscaped
	refDoubleEscapedDash
	refDoubleEscapedDashDash
)

// refReadScript reads a script element's text from r, up to the end tag
// that ends it, which it leaves unread; ended is false when the input ends
// first. Where the Tokenizer would take each "<" step, the same bytes
// decide, read ahead with Peek.
func refReadScript(r *bufio.Reader) (text []byte, ended bool, err error) {
	state := refScriptData
	for {
		ahead, err := r.Peek(len("</script>"))
		if len(ahead) == 0 {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return text, false, err
		}
		n := 1
		if ahead[0] == '<' {
			var end bool
			if state, n, end = refScriptLessThan(ahead[1:], state); end {
				return text, true, nil
			}
		} else {
			state = refScriptNext(state, ahead[0])
		}
		text = append(text, ahead[:n]...)
		if _, err := r.Discard(n); err != nil {
			return text, false, err
		}
	}
}

// refScriptNext is the state after a character other than "<".
func refScriptNext(state int, c byte) int {
	escaped := state >= refEscaped && state <= refEscapedDashDash
	double := state >= refDoubleEscaped
	switch {
	case state == refScriptData:
		return refScriptData
	case c == '-' && (state == refEscapedDashDash || state == refDoubleEscapedDashDash):
		return state
	case c == '-':
		return state + 1
	case c == '>' && (state == refEscapedDashDash || state == refDoubleEscapedDashDash):
		return refScriptData
	case escaped:
		return refEscaped
	case double:
		return refDoubleEscaped
	}
	return state
}

// refScriptLessThan takes the states at a "<" followed by ahead: n is
// how many bytes from the "<" on are read with it (4 for "<!--", which
// holds no other "<"; the rest is read as text), and end reports an end
// tag that ends the script ("</script" and a delimiter, outside the
// double-escaped states).
func refScriptLessThan(ahead []byte, state int) (next, n int, end bool) {
	switch {
	case state == refScriptData:
		if refHasFold(ahead, "/script") {
			return state, 0, true
		}
		if len(ahead) >= 3 && string(ahead[:3]) == "!--" {
			// "<!--": the script data escape start states, to escaped dash
			// dash (§13.2.5.18–21).
			return refEscapedDashDash, 4, false
		}
		return refScriptData, 1, false
	case state < refDoubleEscaped:
		if refHasFold(ahead, "/script") {
			return state, 0, true
		}
		if refHasFold(ahead, "script") {
			return refDoubleEscaped, 1, false // the script data double escape start state
		}
		// A letter that spells no "script", or neither "/" nor a letter:
		// the script data escaped state (§13.2.5.23), where the Tokenizer
		// returns to script data on the latter.
		return refEscaped, 1, false
	default:
		if refHasFold(ahead, "/script") {
			return refEscaped, 1, false // the script data double escape end state
		}
		return refDoubleEscaped, 1, false
	}
}

// refHasFold reports whether b starts with name (lower case) in any ASCII
// case, followed by white space, "/" or ">": a tag name that ends there.
func refHasFold(b []byte, name string) bool {
	if len(b) <= len(name) || refLower(string(b[:len(name)])) != name {
		return false
	}
	switch b[len(name)] {
	case ' ', '\t', '\n', '\r', '\f', '/', '>':
		return true
	}
	return false
}
