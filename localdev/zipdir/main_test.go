package main

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteKeepsExecModeAndContent(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fn.zip")
	if err := write(out, []string{bin}); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" {
		t.Fatalf("entries: %v", zr.File)
	}
	if m := zr.File[0].Mode().Perm(); m != 0o755 {
		t.Fatalf("mode %o, want 755", m)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("content %q", b)
	}

	// Same input, same bytes: the CDK asset hash only moves when the code does.
	first, _ := os.ReadFile(out)
	if err := write(out, []string{bin}); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(out)
	if string(first) != string(second) {
		t.Fatal("zip is not reproducible")
	}
}

func TestWriteRejectsMissingFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "fn.zip")
	if err := write(out, []string{filepath.Join(dir, "nope")}); err == nil {
		t.Fatal("want error for a missing file")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("no zip must be left behind on error")
	}
}
