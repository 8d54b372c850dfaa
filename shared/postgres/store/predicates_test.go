package store_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestActiveMemberWrittenOnce: "an active member" (a channel_members row
// not removed) is spelled once, the activeMember constant of access.go,
// which the access rule's SQL twin uses and TestAccessCasesInSQL holds to
// the case table; every other statement about membership says it through
// that constant, so a new statement cannot spell it another way.
func TestActiveMemberWrittenOnce(t *testing.T) {
	writtenOnce(t, "activeMember", "const activeMember = `removed_at IS NULL`", `(?i)removed_at\s+IS\s+(NOT\s+)?NULL`, 10)
}

// writtenOnce fails on each spelling of a shared predicate (matched by
// spelled) in a store file other than its constant's own line in
// access.go (constLine), and when the constant is used fewer than min
// times (the test would not be looking at the statements).
func writtenOnce(t *testing.T, name, constLine, spelled string, min int) {
	t.Helper()
	uses := regexp.MustCompile(`\+\s*` + name + `\b`)
	re := regexp.MustCompile(spelled)
	n := 0
	for f, src := range sources(t) {
		n += len(uses.FindAll(src, -1))
		for _, m := range re.FindAllIndex(src, -1) {
			line := 1 + strings.Count(string(src[:m[0]]), "\n")
			if f == "access.go" && strings.Contains(lineAt(src, m[0]), constLine) {
				continue
			}
			t.Errorf("%s:%d spells %q: say it with %s (access.go)", f, line, src[m[0]:m[1]], name)
		}
	}
	if n < min {
		t.Errorf("%s is used %d times: the test is not looking at the statements", name, n)
	}
}

// lineAt is the line of src holding offset i.
func lineAt(src []byte, i int) string {
	start := strings.LastIndexByte(string(src[:i]), '\n') + 1
	end := strings.IndexByte(string(src[i:]), '\n')
	if end < 0 {
		return string(src[start:])
	}
	return string(src[start : i+end])
}

// TestNotDeletedWrittenOnce: "not deleted" (a row's deleted_at unset) is
// spelled once, the notDeleted constant of access.go, which the access
// rule's SQL twin uses (a deleted channel reaches no one) and
// TestAccessCasesInSQL holds to the case table; every other statement
// reading only the live events or channels says it through that constant.
func TestNotDeletedWrittenOnce(t *testing.T) {
	writtenOnce(t, "notDeleted", "const notDeleted = `deleted_at IS NULL`", `(?i)deleted_at\s+IS\s+NULL`, 20)
}
