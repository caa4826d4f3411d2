package csp

import (
	"crypto/sha256"
	"encoding/base64"
)

// LoaderJS is the one script ssatd injects inline where a policy would
// block its ad-slots and bids scripts (docs/behaviour.md, "Content Security
// Policy"): their data goes into a JSON data block, which no policy governs
// (HTML §4.12.1.1, "prepare the script element": a data block is never run), and this constant script,
// right after it, reads the block and does what the script would have
// done. Being constant, it has one hash, known before the page, which ssatd
// adds to the policies that need it. Its text lives here so that the hash
// is computed from the very bytes the rewrite writes.
const LoaderJS = `(function(){var d=document.currentScript.previousElementSibling,t=window.tsjs=window.tsjs||{},v=JSON.parse(JSON.parse(d.textContent));if(d.getAttribute("data-tsjs")==="adSlots"){t.adSlots=v;return}var s=t.scheduleInitialAdInit;if(typeof s==="function")s(v);else t.bids=v})();`

// LoaderHash is LoaderJS's hash-source value without its quotes (CSP3,
// "source lists": the algorithm, '-', the base64 of the digest).
var LoaderHash = func() string {
	sum := sha256.Sum256([]byte(LoaderJS))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()
