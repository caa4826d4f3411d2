package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Trusted Server builds its client bundle from per-module files: the
// build discovers dist/tsjs-<id>.js (crates/trusted-server-js/build.rs),
// and the served bundle is "core", then the modules asked for, joined
// with ";\n", its ?v= the hex SHA-256 of exactly that body
// (crates/trusted-server-js/src/bundle.rs, concatenate_modules and
// concatenated_hash). Modules is that set, read from a directory.

// IntegrationOrder is upstream's registration order of integrations
// (crates/trusted-server-core/src/integrations/mod.rs:290-345, builders):
// the enabled ones with a module follow "creative" in the bundle in this
// order (integrations/registry.rs:1148-1163, js_module_ids).
var IntegrationOrder = []string{"aps", "prebid", "testlight", "nextjs", "permutive", "lockr", "didomi",
	"sourcepoint", "osano", "google_tag_manager", "datadome", "gpt", "gpt_diagnostics"}

// deferredModules are the integrations registered with_deferred_js: their
// module is not in the unified bundle but served on its own URL and loaded
// with <script defer> (integrations/prebid.rs:998; registry.rs:1164-1189,
// js_module_ids_immediate and js_module_ids_deferred).
var deferredModules = []string{"prebid"}

// noJSModules are the integrations registered without_js: never in the
// bundle whatever module files exist (registry.rs:676-681; aps.rs:1243,
// gpt_diagnostics.rs:229).
var noJSModules = []string{"aps", "gpt_diagnostics"}

// CoreModule and CreativeModule are the modules every bundle holds:
// core first (bundle.rs, concatenated_module_ids), then creative, the
// module with no integration of its own (registry.rs, JS_ALWAYS).
const (
	CoreModule     = "core"
	CreativeModule = "creative"
)

// moduleName is a module file's name: tsjs-<id>.min.js or tsjs-<id>.js,
// an id as upstream's integration ids are spelt.
var moduleName = regexp.MustCompile(`^tsjs-([a-z0-9_-]+?)(\.min)?\.js$`)

// Modules is a set of tsjs modules by id.
type Modules struct {
	byID map[string][]byte
}

// LoadModules reads every tsjs-<id>.min.js or tsjs-<id>.js file of dir.
// Where both exist for an id the .min.js file is taken. The set must hold
// core: a bundle without it would not define tsjs.
func LoadModules(dir string) (*Modules, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle dir: %w", err)
	}
	m := &Modules{byID: map[string][]byte{}}
	minified := map[string]bool{}
	for _, e := range entries {
		sub := moduleName.FindStringSubmatch(e.Name())
		if sub == nil || e.IsDir() {
			continue
		}
		id, isMin := sub[1], sub[2] != ""
		if _, seen := m.byID[id]; seen && (minified[id] || !isMin) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("bundle dir: %w", err)
		}
		m.byID[id], minified[id] = b, isMin
	}
	if _, ok := m.byID[CoreModule]; !ok {
		return nil, errors.New("bundle dir " + dir + ": no tsjs-core.min.js or tsjs-core.js")
	}
	return m, nil
}

// Has reports whether the set holds module id.
func (m *Modules) Has(id string) bool {
	_, ok := m.byID[id]
	return ok
}

// Module is one module's bytes and their hash (tsjs.rs,
// tsjs_single_module_script_src); ok is false when the set lacks it.
func (m *Modules) Module(id string) (body []byte, hash string, ok bool) {
	b, ok := m.byID[id]
	if !ok {
		return nil, "", false
	}
	return b, Hash(b), true
}

// Unified is the bundle of ids as upstream concatenates it: core first,
// then each id the set holds, in the order given, once; a repeated or
// missing id, and core named again, are skipped. The hash is Hash(body).
func (m *Modules) Unified(ids []string) (body []byte, hash string) {
	order := []string{CoreModule}
	for _, id := range ids {
		if m.Has(id) && !slices.Contains(order, id) {
			order = append(order, id)
		}
	}
	parts := make([][]byte, len(order))
	for i, id := range order {
		parts[i] = m.byID[id]
	}
	body = []byte(strings.Join(byteStrings(parts), ";\n"))
	return body, Hash(body)
}

// ModuleIDs is upstream's js_module_ids for the enabled integrations:
// creative, then each enabled integration the set has a module for, in
// IntegrationOrder (registry.rs:1148-1163).
// Integrations registered without_js are left out.
func (m *Modules) ModuleIDs(enabled []string) []string {
	ids := []string{CreativeModule}
	for _, id := range IntegrationOrder {
		if slices.Contains(enabled, id) && m.Has(id) && !slices.Contains(noJSModules, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Immediate is ModuleIDs without the deferred modules: what the unified
// bundle holds after core (registry.rs, js_module_ids_immediate).
func (m *Modules) Immediate(enabled []string) []string {
	return slices.DeleteFunc(m.ModuleIDs(enabled), IsDeferred)
}

// Deferred is the deferred modules of ModuleIDs, each served alone on its
// own URL (registry.rs, js_module_ids_deferred).
func (m *Modules) Deferred(enabled []string) []string {
	return slices.DeleteFunc(m.ModuleIDs(enabled), func(id string) bool { return !IsDeferred(id) })
}

// IsDeferred reports whether upstream loads module id with <script defer>.
func IsDeferred(id string) bool { return slices.Contains(deferredModules, id) }

func byteStrings(parts [][]byte) []string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = string(p)
	}
	return s
}

// Size is the bytes of every module joined: no bundle made of the set is
// larger.
func (m *Modules) Size() int64 {
	var n int64
	for _, b := range m.byID {
		n += int64(len(b)) + int64(len(";\n"))
	}
	return n
}
