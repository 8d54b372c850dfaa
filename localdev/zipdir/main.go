// Command zipdir writes a Lambda deployment zip: zipdir FILE... OUT.zip.
//
// Every FILE is stored under its base name with its mode bits kept, so a
// bootstrap built with mode 0755 stays executable on provided.al2023. The
// modification time is fixed so the same binary always gives the same zip
// (and the same CDK asset hash).
package main

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// epoch is the fixed timestamp stored for every entry (reproducible zips).
var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: zipdir FILE... OUT.zip")
		os.Exit(2)
	}
	files, out := os.Args[1:len(os.Args)-1], os.Args[len(os.Args)-1]
	if err := write(out, files); err != nil {
		slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error("zipdir failed", "out", out, "err", err)
		os.Exit(1)
	}
}

// write creates out (via a temporary file, renamed at the end) holding files.
func write(out string, files []string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".zipdir-*")
	if err != nil {
		return fmt.Errorf("create temporary zip: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	zw := zip.NewWriter(tmp)
	for _, name := range files {
		if err := add(zw, name); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("finish zip: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close zip: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("chmod zip: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("rename zip: %w", err)
	}
	return nil
}

// add stores one regular file under its base name, keeping its permissions.
func add(zw *zip.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return errors.New(name + " is not a regular file")
	}
	hdr, err := zip.FileInfoHeader(st)
	if err != nil {
		return fmt.Errorf("zip header for %s: %w", name, err)
	}
	hdr.Name = filepath.Base(name)
	hdr.Method = zip.Deflate
	hdr.Modified = epoch
	hdr.SetMode(st.Mode().Perm())
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return fmt.Errorf("zip entry %s: %w", name, err)
	}
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("compress %s: %w", name, err)
	}
	return nil
}
