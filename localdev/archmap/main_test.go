package main

import (
	"bytes"
	"slices"
	"testing"
)

// TestArchitectureTable fails when docs/architecture.md's package table
// differs from the tree or a package has no description.
func TestArchitectureTable(t *testing.T) {
	var out bytes.Buffer
	if err := run(false, "docs/architecture.md", &out); err != nil {
		t.Fatalf("%v\n(refresh with: go run ./localdev/archmap -write, then describe any package it names)", err)
	}
}

func TestRowsKeepDescriptions(t *testing.T) {
	pkgs := []pkg{
		{rel: "shared/domain/kinds"},
		{rel: "shared/service/new", doc: "Package new does a thing.", internal: []string{"shared/domain/kinds"}, outside: []string{"github.com/jackc/pgx/v5"}},
		{rel: "shared/service/bare", internal: []string{"localdev/e2e"}},
	}
	rows, missing := buildRows(pkgs, map[string]string{"shared/domain/kinds": "the kinds \\| table"})
	if !slices.Equal(missing, []string{"shared/service/bare"}) {
		t.Errorf("missing = %v", missing)
	}
	table := render(rows)
	desc, err := parseTable(table)
	if err != nil {
		t.Fatal(err)
	}
	if desc["shared/domain/kinds"] != "the kinds \\| table" || desc["shared/service/new"] != "Package new does a thing." {
		t.Errorf("descriptions after a round trip: %q", desc)
	}
	if !rows[1].filled || rows[0].filled {
		t.Errorf("filled flags: %+v", rows)
	}
	if rows[1].internal != "`domain/kinds`" || rows[1].outside != "jackc/pgx/v5" || rows[2].internal != "`localdev/e2e`" {
		t.Errorf("dependency cells: %+v", rows)
	}
	if again := render(rows); again != table {
		t.Errorf("render is not stable")
	}
}

func TestSplitDoc(t *testing.T) {
	doc := "# A\n\n" + beginMarker + "\n" + header + "| `x` | y | | |\n" + endMarker + "\n\ntail\n"
	before, table, after, err := splitDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if before+table+after != doc || table != header+"| `x` | y | | |\n" {
		t.Errorf("split: %q | %q | %q", before, table, after)
	}
	if _, _, _, err := splitDoc("no markers"); err == nil {
		t.Error("a document without markers was accepted")
	}
}

func TestRowDiff(t *testing.T) {
	have := header + "| `a` | x | | |\n| `b` | y | | |\n"
	want := header + "| `a` | x | `b` | |\n| `c` | z | | |\n"
	got := rowDiff(have, want)
	exp := []string{"  no longer in the tree: b", "  not in the table: c", "  row differs: a"}
	if !slices.Equal(got, exp) {
		t.Errorf("rowDiff = %q, want %q", got, exp)
	}
}

// TestUpwardImportsAreNamed: an import of a higher layer (the arrow
// migrate → service/community once was) and a package in no layer are
// named; imports within a layer and down the layers are not.
func TestUpwardImportsAreNamed(t *testing.T) {
	pkgs := []pkg{
		{rel: "shared/domain/nip98", internal: []string{"shared/domain/authevent"}},
		{rel: "shared/postgres/migrate", internal: []string{"migrations", "shared/postgres/store", "shared/service/community"}},
		{rel: "shared/service/relay", internal: []string{"shared/domain/kinds", "shared/postgres/store", "shared/service/guard"}},
		{rel: "shared/transport/wsrelay", internal: []string{"shared/wiring/config"}},
		{rel: "shared/testing/testkit", internal: []string{"shared/postgres/store"}},
		{rel: "localdev/e2e", internal: []string{"shared/wiring/app", "shared/testing/testkit", "functions/query"}},
		{rel: "tools/x"},
	}
	got := upward(pkgs)
	want := []string{
		"shared/postgres/migrate (postgres/aws) imports shared/service/community (service), a layer above it",
		"shared/transport/wsrelay (transport) imports shared/wiring/config (wiring), a layer above it",
		"tools/x is in no layer (archmap's layers)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("upward = %q\nwant %q", got, want)
	}
}

// TestWalkNamesAreChecked: a walk's pkg.Name and pkg.Type.Method must be
// declared by the module's package of that name; other backticked names
// (not a package of the module) are left alone.
func TestWalkNamesAreChecked(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := listPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	doc := "x\n" + walkBegin + "\n`relay.Relay.SubscribeThen`, `relay.ShareREQLimit`, `wire.Sender`, `sessions.Registry.Put`," +
		" `guard.Guard.Admit`, `ingest.Service.WithMark`, `Tx.DeliveriesGetAtCommit`, `a.WebSocket()`," +
		" `relay.Relay.NoSuchStep`, `sessions.Sender`, `wire.Registry.Put`\n" + walkEnd + "\n`relay.Outside`\n"
	missing, err := checkWalk(root, pkgs, doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"relay.Relay.NoSuchStep", "sessions.Sender", "wire.Registry.Put"}; !slices.Equal(missing, want) {
		t.Fatalf("missing %v, want %v", missing, want)
	}
	if _, err := checkWalk(root, pkgs, "no markers"); err == nil {
		t.Fatal("a document without the walk's markers was accepted")
	}
}
