package tsjs

// MaxAuctionBody is maxAuctionBody, for the external tests.
const MaxAuctionBody = maxAuctionBody
