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

// Hash is the hex sha256 of a bundle's bytes: the tag's ?v= value and the
// bundle response's ETag. The guest hashes the bundle it serves with it,
// which is JS() in the daemon.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
