package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// A unique key that is taken comes back as ErrTaken naming it, and the
// refused community leaves no row; an unknown community is ErrNotFound.
func TestCommunityErrorsInterpretedOnce(t *testing.T) {
	ctx := context.Background()
	st := testkit.NewStore(t, store.Options{MaxConns: 2})
	if err := st.CommunitiesInsert(ctx, &records.Community{ID: "a", Hosts: []string{"a.example"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		row  records.Community
		what string
	}{
		{records.Community{ID: "a"}, "community id a"},
		{records.Community{ID: "b", Hosts: []string{"b.example", "a.example"}}, "hostname a.example"},
	} {
		err := st.CommunitiesInsert(ctx, &c.row)
		var te *records.TakenError
		if !errors.Is(err, records.ErrTaken) || !errors.As(err, &te) || te.What != c.what {
			t.Fatalf("create %+v: %v, want %s taken", c.row, err, c.what)
		}
	}
	if err := st.CommunityHostsInsert(ctx, "default", "a.example"); !errors.Is(err, records.ErrTaken) {
		t.Fatalf("add a taken host: %v, want ErrTaken", err)
	}
	cs, err := st.CommunitiesList(ctx)
	if err != nil || len(cs) != 2 || cs[0].ID != "a" || cs[1].ID != "default" {
		t.Fatalf("communities after the refusals: %v %v", cs, err)
	}
	if c, err := st.CommunitiesGetByHost(ctx, "b.example", "default"); !errors.Is(err, records.ErrNotFound) {
		t.Fatalf("b.example of the refused community: %+v %v", c, err)
	}
	for name, err := range map[string]error{
		"disable": st.CommunitiesDisable(ctx, "nope"),
		"info":    st.CommunitiesSetInfo(ctx, "nope", records.InfoName, "x"),
	} {
		if !errors.Is(err, records.ErrNotFound) {
			t.Errorf("%s of an unknown community: %v, want ErrNotFound", name, err)
		}
	}
	if _, err := st.CommunitiesGet(ctx, "nope"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("read an unknown community: %v, want ErrNotFound", err)
	}
}
