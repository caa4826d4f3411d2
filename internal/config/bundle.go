package config

import "os"

// validateBundle checks that bundle.file, when set, is a readable regular
// file of a size that can be held in memory. The guest reads it once, at
// start-up.
func (c *Config) validateBundle(p *problems) {
	f := c.Bundle.File
	if f == "" {
		return
	}
	st, err := os.Stat(f)
	switch {
	case err != nil:
		p.addf("bundle.file", "cannot be read: %v", err)
	case !st.Mode().IsRegular():
		p.addf("bundle.file", "%q is not a regular file", f)
	case st.Size() == 0:
		p.addf("bundle.file", "%q is empty", f)
	case st.Size() > MaxBundleBytes:
		p.addf("bundle.file", "%q is %d bytes, over the %d byte limit", f, st.Size(), MaxBundleBytes)
	}
}
