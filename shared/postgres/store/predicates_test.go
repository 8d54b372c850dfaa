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
	usesActiveMember := regexp.MustCompile(`\+\s*activeMember\b`)
	spelled := regexp.MustCompile(`(?i)removed_at\s+IS\s+(NOT\s+)?NULL`)
	uses := 0
	for f, src := range sources(t) {
		uses += len(usesActiveMember.FindAll(src, -1))
		for _, m := range spelled.FindAllIndex(src, -1) {
			line := 1 + strings.Count(string(src[:m[0]]), "\n")
			if f == "access.go" && strings.Contains(lineAt(src, m[0]), "const activeMember = `removed_at IS NULL`") {
				continue
			}
			t.Errorf("%s:%d spells %q: say it with activeMember (access.go)", f, line, src[m[0]:m[1]])
		}
	}
	if uses < 10 {
		t.Errorf("activeMember is used %d times: the test is not looking at the statements", uses)
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
