// Package bundle holds the client bundle (tsjs) that every rewritten page
// loads with the script tag of "Bundle tag" in docs/behaviour.md.
package bundle

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:embed tsjs-unified.min.js
var js []byte

// JS returns the bundle's bytes.
func JS() []byte { return js }

// Hash is the hex sha256 of the bundle, the tag's ?v= value.
func Hash() string {
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:])
}
