package store_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestDatabaseErrorsInterpretedOnce: what a database error means (no row,
// a unique violation, a conflict, an unreachable database) is decided in
// errors.go alone, by interpret, and every other store file asks it
// (notFound, taken, IsSerialization, errorf). A file that compares with
// pgx.ErrNoRows, reads a SQLSTATE or unwraps a *pgconn.PgError itself
// decides it a second time, and may decide it differently.
func TestDatabaseErrorsInterpretedOnce(t *testing.T) {
	decides := regexp.MustCompile(`pgx\.ErrNoRows|pgconn\.PgError|\.Code\s*==\s*"|errors\.Is\([^)]*records\.Err(NotFound|Taken|Conflict)\)|errors\.Is\([^)]*reject\.ErrUnavailable\)`)
	for f, src := range sources(t) {
		if f == "errors.go" {
			continue
		}
		for _, m := range decides.FindAllIndex(src, -1) {
			if strings.HasPrefix(strings.TrimSpace(lineAt(src, m[0])), "//") {
				continue // a comment saying it, not code deciding it
			}
			line := 1 + strings.Count(string(src[:m[0]]), "\n")
			t.Errorf("%s:%d decides what a database error means (%q): ask interpret (errors.go: notFound, taken, IsSerialization)", f, line, src[m[0]:m[1]])
		}
	}
}
