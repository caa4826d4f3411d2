import adapter from '@sveltejs/adapter-node';

// kit.csp.mode 'auto': a prerendered page gets its policy in a <meta> with
// the SHA-256 of each inline script and style; a page rendered per request
// gets it in the Content-Security-Policy header with a fresh nonce.
export default {
	kit: {
		adapter: adapter(),
		csp: {
			mode: 'auto',
			directives: {
				'script-src': ['self'],
				// SvelteKit's route announcer sets a style attribute.
				'style-src': ['self', 'unsafe-inline']
			}
		}
	}
};
