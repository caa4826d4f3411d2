package config

// OriginForLog is the origin URL as log lines may show it: credentials are
// masked even though Validate refuses them, so that a Config built without
// Validate, or a future change to validation, cannot put a secret in a log.
func (p *PublisherConfig) OriginForLog() string {
	if p.Origin != nil {
		return maskURL(p.Origin.String())
	}
	return maskURL(p.OriginURL)
}
