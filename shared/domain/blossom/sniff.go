package blossom

import "net/http"

// SniffLen is how many leading bytes of a blob Sniffed reads.
const SniffLen = 32

// sniffedInline are the passive raster types a sniffed blob is served
// inline as (Buzz's relay serves a feedback attachment so: the type read
// from the bytes, never the submitter's imeta m; SVG, HTML and anything
// else download).
var sniffedInline = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Sniffed is the served type and disposition of a blob whose first bytes
// are prefix: a PNG, JPEG, GIF or WebP inline as that type, anything else
// DefaultType as an attachment.
func Sniffed(prefix []byte) (contentType, disposition string) {
	if t := http.DetectContentType(prefix); sniffedInline[t] {
		return t, "inline"
	}
	return DefaultType, "attachment"
}
