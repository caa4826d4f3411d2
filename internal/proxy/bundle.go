package proxy

import (
	"fmt"
	"os"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/tsjs"
)

// clientBundle is what pages load: the bundle and the modules the tsjs
// family serves, and the head tags that name them.
type clientBundle struct {
	tsjs.Bundle
	// headTags follow the ad-slots script right after <head>, in
	// upstream's order (crates/trusted-server-core/src/html_processor.rs:
	// 409-451): each integration's head inserts (none yet), the bundle
	// tag, then the deferred modules' tags.
	headTags []byte
}

// bundleOf is the bundle pages load: bundle.file, or the modules of
// bundle.dir, when configured, read once here; else builtIn.
func bundleOf(cfg *config.Config, builtIn []byte) (clientBundle, error) {
	var attrs []rewrite.Attr
	if cfg.Integrations.GAMAttribution {
		attrs = append(attrs, rewrite.GAMAttribution)
	}
	switch {
	case cfg.Bundle.Dir != "":
		return bundleOfDir(cfg, attrs)
	case cfg.Bundle.File != "":
		b, err := os.ReadFile(cfg.Bundle.File)
		if err != nil {
			return clientBundle{}, fmt.Errorf("bundle.file: %w", err)
		}
		if err := config.CheckBundleSize(int64(len(b))); err != nil {
			return clientBundle{}, fmt.Errorf("bundle.file: %q %w", cfg.Bundle.File, err)
		}
		return clientBundle{Bundle: tsjs.Bundle{JS: b, Hash: bundle.Hash(b), User: true}, headTags: rewrite.BundleTag(bundle.Hash(b), attrs...)}, nil
	}
	h := bundle.Hash(builtIn)
	return clientBundle{Bundle: tsjs.Bundle{JS: builtIn, Hash: h}, headTags: rewrite.BundleTag(h, attrs...)}, nil
}

// bundleOfDir is upstream's bundle from modules: core and the immediate
// modules joined (crates/trusted-server-js/src/bundle.rs,
// concatenate_modules), each deferred module on its own URL with its own
// hash (tsjs.rs, tsjs_deferred_script_tags).
func bundleOfDir(cfg *config.Config, attrs []rewrite.Attr) (clientBundle, error) {
	m, err := config.LoadBundleDir(cfg.Bundle.Dir)
	if err != nil {
		return clientBundle{}, fmt.Errorf("bundle.dir: %w", err)
	}
	enabled := cfg.Integrations.Enabled
	js, hash := m.Unified(m.Immediate(enabled))
	cb := clientBundle{Bundle: tsjs.Bundle{JS: js, Hash: hash, User: true, Deferred: map[string]tsjs.Module{}}}
	cb.headTags = rewrite.BundleTag(hash, attrs...)
	for _, id := range m.Deferred(enabled) {
		body, h, _ := m.Module(id)
		cb.Deferred[id] = tsjs.Module{JS: body, Hash: h}
		cb.headTags = append(cb.headTags, rewrite.DeferredTag(id, h)...)
	}
	return cb, nil
}
