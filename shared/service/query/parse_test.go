package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
)

// Every bad request is a 400 whose message says what is wrong: malformed
// bodies and fields, and each window and thread validation rule.
func TestBadRequests(t *testing.T) {
	e := newEnv(t)
	ch := "6f22c624-a6ec-4b2d-9bad-d5188f84912b"
	id := strings.Repeat("ab", 32)
	for _, c := range []struct{ body, want string }{
		{``, "body must be a JSON array of filters"},
		{`{"kinds":[1]}`, "body must be a JSON array of filters"},
		{`[{"kinds":[1]}`, "malformed JSON"},
		{`[1]`, "filter 0: a filter must be a JSON object"},
		{`[{"kinds":"9"}]`, "kinds must be an array of integers"},
		{`[{"kinds":[70000]}]`, "kinds[0] must be an integer from 0 to 65535"},
		{`[{"kinds":[1.5]}]`, "kinds[0] must be an integer"},
		{`[{"ids":["abc"]}]`, "ids[0] must be 64 hex characters"},
		{`[{"authors":[1]}]`, "authors must be an array of strings"},
		{`[{"since":"yesterday"}]`, "since must be a unix timestamp"},
		{`[{"until":-5}]`, "until must not be negative"},
		{`[{"limit":-1}]`, "limit must not be negative"},
		{`[{"search":5}]`, "search must be a string"},
		{`[{"#e":"x"}]`, "#e must be an array of strings"},
		{`[{"page":0}]`, "page must be 1 or more"},
		{fmt.Sprintf(`[{"before_id":%q}]`, id), "before_id requires until"},
		{`[{"before_id":"xyz","until":5}]`, "before_id must be a 64-hex event id"},
		{`[{"top_level":"yes","#h":["x"]}]`, "top_level must be true or false"},
		{`[{"top_level":true}]`, "top_level requires exactly one #h channel, got 0"},
		{fmt.Sprintf(`[{"top_level":true,"#h":[%q,%q]}]`, ch, ch), "top_level requires exactly one #h channel, got 2"},
		{fmt.Sprintf(`[{"top_level":true,"#h":[%q],"until":5}]`, ch), "top_level cursor requires both until and before_id, or neither"},
		{fmt.Sprintf(`[{"top_level":true,"#h":[%q],"before_id":%q}]`, ch, id), "top_level cursor requires both until and before_id, or neither"},
		{fmt.Sprintf(`[{"top_level":true,"#h":[%q],"until":5,"before_id":"nothex"}]`, ch), "before_id must be a 64-hex event id"},
		{fmt.Sprintf(`[{"top_level":true,"#h":[%q],"limit":-3}]`, ch), "limit must not be negative"},
		{`[{"depth_limit":5}]`, "depth_limit requires exactly one #e (the thread root), got 0"},
		{fmt.Sprintf(`[{"depth_limit":5,"#e":[%q,%q]}]`, id, id), "got 2"},
		{`[{"depth_limit":5,"#e":["short"]}]`, "#e must be the 64-hex id of the thread root"},
		{fmt.Sprintf(`[{"depth_limit":-1,"#e":[%q]}]`, id), "depth_limit must not be negative"},
		{fmt.Sprintf(`[{"depth_limit":5,"#e":[%q],"thread_cursor_id":%q}]`, id, id), "thread_cursor_id requires thread_cursor"},
		{fmt.Sprintf(`[{"depth_limit":5,"#e":[%q],"thread_cursor":-2}]`, id), "thread_cursor must be a unix timestamp, or -1"},
		{fmt.Sprintf(`[{"depth_limit":5,"#e":[%q],"thread_cursor":1,"threadCursorId":"zz"}]`, id), "threadCursorId must be a 64-hex event id"},
		{fmt.Sprintf(`[{"kinds":[1]},{"top_level":true,"#h":[%q],"until":5}]`, ch), "filter 1: top_level cursor"},
		{"[" + strings.Repeat(`{},`, relayinfo.MaxHTTPFilters) + "{}]", "filters, the limit is 10"},
	} {
		e.bad(c.body, c.want)
	}
	// Unknown fields are ignored, null is absent.
	if _, err := e.q.Query(e.ctx, "default", testHost, id, []byte(`[{"kinds":[1],"feed_types":["x"],"#buzz-channel":["y"],"until":null}]`)); err != nil {
		t.Fatalf("unknown fields: %v", err)
	}
}

// FuzzParse: no input panics the filter/extension parser or the planner.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[{"kinds":[9],"#h":["c"],"top_level":true,"limit":50,"until":1,"before_id":"` + strings.Repeat("a", 64) + `"}]`,
		`[{"#e":["` + strings.Repeat("b", 64) + `"],"depth_limit":64,"thread_cursor":-1,"threadCursorId":"x"}]`,
		`[{"ids":[],"authors":null,"since":1e3,"page":2,"search":"x","include_aux":true}]`,
		`[]`, `[{}]`, `{`, `[{"limit":1e400}]`, `[{"kinds":[-1]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fs, err := parseBody(body)
		if err != nil {
			if _, ok := asInvalid(err); !ok {
				t.Fatalf("parse error is not a rejection: %v", err)
			}
			return
		}
		if len(fs) > relayinfo.MaxHTTPFilters {
			t.Fatalf("%d filters accepted", len(fs))
		}
		for _, fl := range fs {
			checkBounds(t, fl)
		}
		if _, err := newRequest(fs, plainMaxLimit); err != nil {
			if _, ok := asInvalid(err); !ok {
				t.Fatalf("plan error is not a rejection: %v", err)
			}
		}
	})
}
