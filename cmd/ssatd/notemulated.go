package main

import (
	"github.com/prometheus/client_golang/prometheus"
)

// notEmulatedGauge counts what the running configuration, when it is a
// Trusted Server file, sets that ssatd accepts and does not do (config
// check lists them); it follows reloads.
func (d *daemon) notEmulatedGauge() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "ssatd", Name: "config_not_emulated",
		Help: "Sections and keys of the Trusted Server settings file that ssatd accepts and does not emulate (ssatd config check lists them); 0 for a native file.",
	}, func() float64 {
		if g := d.gen.Load(); g != nil {
			return float64(len(g.cfg.Source.NotEmulated))
		}
		return 0
	})
}
