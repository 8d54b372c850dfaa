package kinds

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/testing/mdtable"
)

// readmeRow is one row of README.md's "Event kinds" table, without the free
// text of its rules column.
type readmeRow struct {
	name, sentBy, stored string
	traits               []string
}

// rowOf is how README.md writes k.
func rowOf(k Kind) (key string, r readmeRow) {
	key = strconv.Itoa(k.First)
	if k.Last != k.First {
		key += "-" + strconv.Itoa(k.Last)
	}
	if k.GroupDefault {
		key = "any other"
	}
	r = readmeRow{name: k.Name, stored: string(k.Storage), sentBy: "AUTH only"}
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

// readmeKinds parses the table under README.md's "## Event kinds".
func readmeKinds(t *testing.T) map[string]readmeRow {
	t.Helper()
	header, cells, err := mdtable.Read("../../../README.md", "## Event kinds")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kind", "name", "sent by", "stored", "traits", "rules"}; !slices.Equal(header, want) {
		t.Fatalf("README.md kinds table header is %q, want %q", header, want)
	}
	rows := map[string]readmeRow{}
	for _, c := range cells {
		if len(c) != 6 {
			t.Errorf("README.md kinds row %q has %d cells, want 6", c, len(c))
			continue
		}
		r := readmeRow{name: c[1], sentBy: c[2], stored: c[3]}
		for _, tr := range strings.Split(c[4], ",") {
			if tr = strings.TrimSpace(tr); tr != "" {
				r.traits = append(r.traits, tr)
			}
		}
		slices.Sort(r.traits)
		if _, dup := rows[c[0]]; dup {
			t.Errorf("README.md lists kind %s twice", c[0])
		}
		rows[c[0]] = r
	}
	return rows
}

// README.md's kinds table and the kinds table say the same, both ways.
func TestReadmeKindsTable(t *testing.T) {
	doc := readmeKinds(t)
	for _, k := range table {
		key, want := rowOf(k)
		got, ok := doc[key]
		if !ok {
			t.Errorf("README.md has no row for kind %s (%s)", key, k.Name)
			continue
		}
		if got.name != want.name || got.sentBy != want.sentBy || got.stored != want.stored || !slices.Equal(got.traits, want.traits) {
			t.Errorf("README.md kind %s = %+v, the kinds table says %+v", key, got, want)
		}
		delete(doc, key)
	}
	for key := range doc {
		t.Errorf("README.md lists kind %s, which the kinds table does not have", key)
	}
}
