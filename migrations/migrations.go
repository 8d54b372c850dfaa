// Package migrations embeds the SQL migrations, applied in file-name order by
// shared/postgres/migrate (tern). Each file is one version; never edit an applied one.
package migrations

import "embed"

// FS holds the *.sql files of this folder.
//
//go:embed *.sql
var FS embed.FS
