package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/filter"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/relayinfo"
)

// Page sizes of the three read paths.
const (
	plainMaxLimit      = relayinfo.MaxLimit
	windowDefaultLimit = relayinfo.WindowDefaultLimit
	windowMaxLimit     = relayinfo.WindowMaxLimit
	threadDefaultLimit = relayinfo.ThreadDefaultLimit
	threadMaxLimit     = relayinfo.ThreadMaxLimit
	maxValues          = relayinfo.MaxFilterValues
	maxSearchBytes     = relayinfo.MaxSearchBytes
	maxSearchTerms     = relayinfo.MaxSearchTerms
	maxDepthLimit      = relayinfo.MaxDepthLimit
)

// bridgeFilter is one parsed request filter: the NIP-01 filter (one
// meaning for every path, shared/domain/filter) plus the Buzz bridge extensions
// this package plans. In the NIP-01 part a nil slice means "no
// constraint" and a non-nil empty slice matches nothing.
type bridgeFilter struct {
	filter.Filter
	Limit *int64 // nil when absent

	// Extensions.
	TopLevel         bool
	IncludeSummaries bool
	IncludeAux       bool
	BeforeID         string // "" when absent
	Page             int64  // 0 when absent
	DepthLimit       *int64
	ThreadCursor     *int64
	ThreadCursorID   string
	ThreadWindow     bool // Buzz's thread window (threadwindow.go)
}

func invalid(format string, args ...any) error { return reject.Invalidf(format, args...) }

// parseBody reads a bridge body: a JSON array of filter objects.
func parseBody(body []byte) ([]*bridgeFilter, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, invalid("body must be a JSON array of filters")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(trimmed, &raws); err != nil {
		return nil, invalid("body must be a JSON array of filters: %s", jsonProblem(err))
	}
	if err := filterCount(len(raws), relayinfo.MaxHTTPFilters); err != nil {
		return nil, err
	}
	out := make([]*bridgeFilter, 0, len(raws))
	for i, raw := range raws {
		f, err := parseFilter(raw)
		if err != nil {
			r, _ := reject.As(err)
			return nil, invalid("filter %d: %s", i, r.Reason)
		}
		out = append(out, f)
	}
	return out, nil
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("malformed JSON at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("expected %s, got a JSON %s", e.Type, e.Value)
	}
	return "malformed JSON"
}

// parseFilter reads one filter object. Unknown fields are ignored, as NIP-01
// relays do; known fields of the wrong type are rejected.
func parseFilter(raw json.RawMessage) (*bridgeFilter, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return nil, invalid("a filter must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(t, &fields); err != nil {
		return nil, invalid("a filter must be a JSON object: %s", jsonProblem(err))
	}
	f := &bridgeFilter{}
	var err error
	for key, v := range fields {
		if isNull(v) {
			continue
		}
		switch key {
		case "ids":
			f.IDs, err = hexList(key, v)
		case "authors":
			f.Authors, err = hexList(key, v)
		case "kinds":
			f.Kinds, err = kindList(v)
		case "since":
			f.Since, err = timestamp(key, v)
		case "until":
			f.Until, err = timestamp(key, v)
		case "limit":
			var n int64
			if n, err = integer(key, v); err == nil {
				if n < 0 {
					err = invalid("limit must not be negative")
				}
				f.Limit = &n
			}
		case "search":
			if err = json.Unmarshal(v, &f.Search); err != nil {
				err = invalid("search must be a string")
			}
		case "top_level":
			f.TopLevel, err = boolean(key, v)
		case "thread_window":
			f.ThreadWindow, err = boolean(key, v)
		case "include_summaries":
			f.IncludeSummaries, err = boolean(key, v)
		case "include_aux":
			f.IncludeAux, err = boolean(key, v)
		case "before_id":
			f.BeforeID, err = eventID(key, v)
		case "page":
			if f.Page, err = integer(key, v); err == nil && f.Page < 1 {
				err = invalid("page must be 1 or more")
			}
		case "depth_limit":
			var n int64
			if n, err = integer(key, v); err == nil {
				if n < 0 {
					err = invalid("depth_limit must not be negative")
				}
				f.DepthLimit = &n
			}
		case "thread_cursor", "threadCursor":
			var n int64
			if n, err = integer(key, v); err == nil {
				if n < -1 {
					err = invalid("%s must be a unix timestamp, or -1 for the start of the thread", key)
				}
				f.ThreadCursor = &n
			}
		case "thread_cursor_id", "threadCursorId":
			f.ThreadCursorID, err = eventID(key, v)
		default:
			if len(key) == 2 && key[0] == '#' && filter.TagName(key[1:]) {
				var vals []string
				if vals, err = stringList(key, v); err == nil {
					if f.Tags == nil {
						f.Tags = map[string][]string{}
					}
					f.Tags[key[1:]] = vals
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	filter.Channels(f.Tags["h"])
	return f, validate(f)
}

// validate applies the rules both front doors share to a parsed filter:
// text Postgres can hold, and a bounded search string.
func validate(f *bridgeFilter) error {
	for name, vals := range f.Tags {
		for _, v := range vals {
			if err := eventcheck.Text("#"+name+" value", v); err != nil {
				return err
			}
		}
	}
	if s := f.Search; s != "" {
		if err := eventcheck.Text("search", s); err != nil {
			return err
		}
		if len(s) > maxSearchBytes {
			return invalid("search is %d bytes, the limit is %d", len(s), maxSearchBytes)
		}
		if n := len(strings.Fields(s)); n > maxSearchTerms {
			return invalid("search has %d terms, the limit is %d", n, maxSearchTerms)
		}
	}
	return nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func stringList(key string, v json.RawMessage) ([]string, error) {
	var list []string
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, invalid("%s must be an array of strings", key)
	}
	if len(list) > maxValues {
		return nil, invalid("%s has %d values, the limit is %d", key, len(list), maxValues)
	}
	if list == nil {
		list = []string{}
	}
	return list, nil
}

func hexList(key string, v json.RawMessage) ([]string, error) {
	list, err := stringList(key, v)
	if err != nil {
		return nil, err
	}
	return hex64s(key, list)
}

func kindList(v json.RawMessage) ([]int, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		return nil, invalid("kinds must be an array of integers")
	}
	nums := make([]json.Number, len(raws))
	for i, r := range raws {
		if notNumber(r) {
			return nil, invalid("kinds must be an array of integers")
		}
		nums[i] = json.Number(bytes.TrimSpace(r))
	}
	if len(nums) > maxValues {
		return nil, invalid("kinds has %d values, the limit is %d", len(nums), maxValues)
	}
	out := make([]int, 0, len(nums))
	for i, n := range nums {
		k, ok := toInt(n)
		if !ok || k < 0 || k > kinds.Max {
			return nil, invalid("kinds[%d] must be an integer from 0 to %d", i, kinds.Max)
		}
		out = append(out, int(k))
	}
	return out, nil
}

// notNumber is true for a JSON value that is not a bare number: json.Number
// would also accept a quoted one ("10").
func notNumber(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) == 0 || !(t[0] == '-' || t[0] >= '0' && t[0] <= '9')
}

func integer(key string, v json.RawMessage) (int64, error) {
	if notNumber(v) {
		return 0, invalid("%s must be an integer", key)
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&n); err != nil {
		return 0, invalid("%s must be an integer", key)
	}
	i, ok := toInt(n)
	if !ok {
		return 0, invalid("%s must be an integer", key)
	}
	return i, nil
}

// toInt accepts integers, and floats with no fractional part (50.0), that fit
// comfortably in an int64.
func toInt(n json.Number) (int64, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

func timestamp(key string, v json.RawMessage) (*int64, error) {
	n, err := integer(key, v)
	if err != nil {
		return nil, invalid("%s must be a unix timestamp (integer seconds)", key)
	}
	if n < 0 {
		return nil, invalid("%s must not be negative", key)
	}
	return &n, nil
}

func boolean(key string, v json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, invalid("%s must be true or false", key)
	}
	return b, nil
}

func eventID(key string, v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		if id, ok := filter.Hex64(s); ok {
			return id, nil
		}
	}
	return "", invalid("%s must be a 64-hex event id", key)
}

// fromNostr validates a WebSocket REQ/COUNT filter (extensions already
// gone) and converts it.
func fromNostr(nf nostr.Filter) (*bridgeFilter, error) {
	if len(nf.IDs) > maxValues || len(nf.Authors) > maxValues || len(nf.Kinds) > maxValues {
		return nil, invalid("a filter list has more than %d values", maxValues)
	}
	for _, k := range nf.Kinds {
		// A limit-0 filter asks for nothing stored, and a kind out of
		// range matches nothing live: NDK's keepalive probe ({kinds:
		// [99999], limit: 0}) gets its EOSE, as from any relay.
		if (k < 0 || k > kinds.Max) && !nf.LimitZero {
			return nil, invalid("kind %d must be an integer from 0 to %d", k, kinds.Max)
		}
	}
	if _, err := hex64s("ids", slices.Clone(nf.IDs)); err != nil {
		return nil, err
	}
	if _, err := hex64s("authors", slices.Clone(nf.Authors)); err != nil {
		return nil, err
	}
	for name, vals := range nf.Tags {
		if filter.TagName(name) && len(vals) > maxValues {
			return nil, invalid("#%s has %d values, the limit is %d", name, len(vals), maxValues)
		}
	}
	f := &bridgeFilter{Filter: filter.FromNostr(nf)}
	switch {
	case nf.LimitZero:
		zero := int64(0)
		f.Limit = &zero
	case nf.Limit > 0:
		l := int64(nf.Limit)
		f.Limit = &l
	case nf.Limit < 0:
		return nil, invalid("limit must not be negative")
	}
	return f, validate(f)
}

// hex64s checks and lower-cases list in place (filter.Hex64).
func hex64s(key string, list []string) ([]string, error) {
	for i, s := range list {
		h, ok := filter.Hex64(s)
		if !ok {
			return nil, invalid("%s[%d] must be 64 hex characters", key, i)
		}
		list[i] = h
	}
	return list, nil
}
