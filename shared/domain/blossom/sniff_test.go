package blossom

import "testing"

// TestSniffed: the type is read from the bytes, never a label: the four
// passive raster types inline, everything else (SVG, HTML, PDF, an image
// cut short, nothing) a download.
func TestSniffed(t *testing.T) {
	for _, c := range []struct {
		name, prefix, typ, disposition string
	}{
		{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png", "inline"},
		{"jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg", "inline"},
		{"gif87", "GIF87a\x01\x00", "image/gif", "inline"},
		{"gif89", "GIF89a\x01\x00", "image/gif", "inline"},
		{"webp", "RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp", "inline"},
		{"svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, DefaultType, "attachment"},
		{"html labelled png", "<!DOCTYPE html><html><script>x</script>", DefaultType, "attachment"},
		{"pdf", "%PDF-1.7\n", DefaultType, "attachment"},
		{"riff without webp", "RIFF\x24\x00\x00\x00WAVEfmt ", DefaultType, "attachment"},
		{"text", "hello", DefaultType, "attachment"},
		{"empty", "", DefaultType, "attachment"},
	} {
		typ, disp := Sniffed([]byte(c.prefix))
		if typ != c.typ || disp != c.disposition {
			t.Errorf("%s: %s %s, want %s %s", c.name, typ, disp, c.typ, c.disposition)
		}
	}
}
