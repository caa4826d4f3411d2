// The origin names itself in the page's data, as a share link does: the
// framework's start script carries it, and ssatd would rewrite it there.
export function load({ url }) {
	return { share: url.origin + url.pathname + '?utm=share' };
}
