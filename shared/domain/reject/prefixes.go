package reject

// Prefixes are the seven NIP-01 prefixes, in NIP-01's order. Text that
// starts with one of them followed by ": " is written in this package
// only (prefix_scan_test.go keeps it so): everywhere else a refusal is an
// *Error and its wire text comes from a transport's one error table.
var Prefixes = []Prefix{Invalid, Restricted, AuthRequired, Duplicate, Blocked, RateLimited, Internal}
