package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/buzzrelay/relay/shared/postgres/store"
)

// Every shape of the event insert is a statement Postgres accepts: each
// names only the parameters it uses, so every one has a type.
func TestInsertShapesPrepare(t *testing.T) {
	ctx := context.Background()
	_, conn := freshConn(t)
	shapes := store.InsertStatements()
	if len(shapes) != 16 {
		t.Fatalf("%d insert shapes, want 16", len(shapes))
	}
	for i, q := range shapes {
		if _, err := conn.Conn().Prepare(ctx, fmt.Sprintf("shape%d", i), q); err != nil {
			t.Errorf("shape %d does not prepare: %v\n%s", i, err, q)
		}
	}
}

func TestRenumber(t *testing.T) {
	for _, c := range []struct {
		in, out string
		args    []int
	}{
		{"VALUES ($1, $2)", "VALUES ($1, $2)", []int{0, 1}},
		{"SELECT $4, $11, $4::text", "SELECT $1, $2, $1::text", []int{3, 10}},
		{"x = $16 AND y = $1", "x = $1 AND y = $2", []int{15, 0}},
		{"no parameters, $ alone", "no parameters, $ alone", nil},
	} {
		out, args := store.Renumber(c.in)
		if out != c.out || !slices.Equal(args, c.args) {
			t.Errorf("renumber(%q) = %q %v, want %q %v", c.in, out, args, c.out, c.args)
		}
	}
}
