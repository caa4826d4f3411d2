export const prerender = false;
export function load() {
	return { rendered: 'per request' };
}
