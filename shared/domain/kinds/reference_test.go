package kinds

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/testing/mdtable"
)

// referenceRow is one row of docs/reference.md's "Event kinds" table, without the free
// text of its rules column.
type referenceRow struct {
	name, sentBy, stored string
	traits               []string
}

// rowOf is how docs/reference.md writes k.
func rowOf(k Kind) (key string, r referenceRow) {
	key = strconv.Itoa(k.First)
	if k.Last != k.First {
		key += "-" + strconv.Itoa(k.Last)
	}
	if k.GroupDefault {
		key = "any other"
	}
	r = referenceRow{name: k.Name, stored: string(k.Storage), sentBy: "AUTH only"}
	switch {
	case k.Accepted:
		r.sentBy = "client"
	case k.RelayOnly:
		r.sentBy = "relay"
	}
	for _, t := range []struct {
		on   bool
		name string
	}{
		{k.ChannelState, "channel state"}, {k.Overlay, "overlay"}, {k.Notice, "notice"},
		{k.Aux, "aux"}, {k.Deletes, "deletes"}, {k.Searchable, "searchable"},
		{k.InChannel, "in channel"}, {k.RecipientOnly, "recipient only"},
		{k.AnyAuthor, "any author"}, {k.Ephemeral, "ephemeral"}, {k.Personal, "personal"},
		{k.AuthorOnly, "author only"}, {k.SharedGated, "shared gated"},
	} {
		if t.on {
			r.traits = append(r.traits, t.name)
		}
	}
	slices.Sort(r.traits)
	return key, r
}

// referenceKinds parses the table under docs/reference.md's "## Event kinds".
func referenceKinds(t *testing.T) map[string]referenceRow {
	t.Helper()
	header, cells, err := mdtable.Read("../../../docs/reference.md", "## Event kinds")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kind", "name", "sent by", "stored", "traits", "rules"}; !slices.Equal(header, want) {
		t.Fatalf("docs/reference.md kinds table header is %q, want %q", header, want)
	}
	rows := map[string]referenceRow{}
	for _, c := range cells {
		if len(c) != 6 {
			t.Errorf("docs/reference.md kinds row %q has %d cells, want 6", c, len(c))
			continue
		}
		r := referenceRow{name: c[1], sentBy: c[2], stored: c[3]}
		for _, tr := range strings.Split(c[4], ",") {
			if tr = strings.TrimSpace(tr); tr != "" {
				r.traits = append(r.traits, tr)
			}
		}
		slices.Sort(r.traits)
		if _, dup := rows[c[0]]; dup {
			t.Errorf("docs/reference.md lists kind %s twice", c[0])
		}
		rows[c[0]] = r
	}
	return rows
}

// docs/reference.md's kinds table and the kinds table say the same, both ways.
func TestReferenceKindsTable(t *testing.T) {
	doc := referenceKinds(t)
	for _, k := range table {
		key, want := rowOf(k)
		got, ok := doc[key]
		if !ok {
			t.Errorf("docs/reference.md has no row for kind %s (%s)", key, k.Name)
			continue
		}
		if got.name != want.name || got.sentBy != want.sentBy || got.stored != want.stored || !slices.Equal(got.traits, want.traits) {
			t.Errorf("docs/reference.md kind %s = %+v, the kinds table says %+v", key, got, want)
		}
		delete(doc, key)
	}
	for key := range doc {
		t.Errorf("docs/reference.md lists kind %s, which the kinds table does not have", key)
	}
}
