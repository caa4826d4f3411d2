#!/usr/bin/env bash
# The shell walk-through of docs/testing.md, with its checks: run it as
#   examples/testing/run.sh ./ssatd examples/testing/shell.sh
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$(mktemp -d)"

# A navigation: the page gets the slot, and the bids the script says.
curl -s -D headers.txt -o page.html \
	-H 'Sec-Fetch-Dest: document' -H 'Sec-Fetch-Mode: navigate' "$SSATD/"

# The decisions known when the headers went out ...
grep -i '^x-ssatd-diagnostics:' headers.txt | head -1 | cut -d' ' -f2- | tee decisions.json
jq -e '.eligible and .slots == ["top-leaderboard"] and .auction == "pending"' decisions.json >/dev/null ||
	fail "header decisions"
# ... and, in the trailer after the body, the auction's outcome.
grep -i '^x-ssatd-diagnostics:' headers.txt | tail -1 | cut -d' ' -f2- | tee outcome.json
jq -e '.auction == "completed" and .endpoints[0].outcome == "bids"
	and .bids[0].bidder == "alpha" and .bids[0].hb_pb == "2.57"' outcome.json >/dev/null ||
	fail "trailer outcome"

# What the bidder received: one impression per matched slot.
curl -s "$BIDDER/__requests" | tee requests.json | jq -c '.[-1].imp[] | {id, tagid}'
jq -e '.[-1].imp[0].id == "top-leaderboard" and (.[-1].site.page | startswith(env.SSATD))' requests.json >/dev/null ||
	fail "bid request"
curl -s -X DELETE "$BIDDER/__requests"
[ "$(curl -s "$BIDDER/__requests" | jq length)" = 0 ] || fail "DELETE /__requests"

# A request that is not a navigation gets no ad stack, and no auction.
curl -s -D - -o /dev/null "$SSATD/" | grep -i '^x-ssatd-diagnostics:' | cut -d' ' -f2- |
	jq -e '.eligible == false and .ineligible == "not_document" and .auction == "none"' >/dev/null ||
	fail "ineligible decisions"
[ "$(curl -s "$BIDDER/__requests" | jq length)" = 0 ] || fail "an ineligible page called the bidder"
echo "shell example: ok"
