package config

import (
	"context"
	"fmt"
	"strings"

	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/directory"
)

// DirectoryConfig is DIRECTORY_*: where the documents of what each host
// serves live (shared/service/directory), read by NIP-11 and a new
// WebSocket connection's host instead of the database.
type DirectoryConfig struct {
	// Bucket is DIRECTORY_BUCKET, else MEDIA_BUCKET
	// (the stack's media bucket; make dev's local S3 server); empty: no
	// directory, hosts resolve in the database.
	Bucket string
	// Prefix is DIRECTORY_PREFIX (default "directory/").
	Prefix string
	// Endpoint is AWS_ENDPOINT_URL_S3, as for media.
	Endpoint string
}

// On reports whether the deployment keeps a directory.
func (d DirectoryConfig) On() bool { return d.Bucket != "" }

// DefaultDirectoryPrefix is DIRECTORY_PREFIX's default.
const DefaultDirectoryPrefix = "directory/"

func loadDirectory(getenv func(string) string) DirectoryConfig {
	d := DirectoryConfig{Bucket: getenv("DIRECTORY_BUCKET"), Prefix: getenv("DIRECTORY_PREFIX"), Endpoint: getenv("AWS_ENDPOINT_URL_S3")}
	for _, k := range []string{"MEDIA_BUCKET"} {
		if d.Bucket == "" {
			d.Bucket = getenv(k)
		}
	}
	if d.Prefix == "" {
		d.Prefix = DefaultDirectoryPrefix
	}
	if !strings.HasSuffix(d.Prefix, "/") {
		d.Prefix += "/"
	}
	return d
}

// OpenDirectory builds the directory over its bucket and st (no network
// call: the S3 client connects on its first request); nil when off.
func (c *Config) OpenDirectory(ctx context.Context, st *store.Store) (*directory.Directory, error) {
	d := c.Directory
	if !d.On() {
		return nil, nil
	}
	bucket, err := s3blobs.Open(ctx, c.AWSRegion, d.Bucket, d.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("directory: %w", err)
	}
	return directory.New(bucket, d.Prefix, st, c.DefaultCommunity), nil
}

// RefreshDirectory rewrites every community's directory documents from
// the database at dsn, for the setup paths that change communities
// outside the use cases (provisioning at deploy, make dev's start): a
// deployment that predates the directory gets its documents there too.
// Nothing when the directory is off.
func (c *Config) RefreshDirectory(ctx context.Context, dsn string) error {
	if !c.Directory.On() {
		return nil
	}
	st, err := store.Open(ctx, dsn, store.Options{MaxConns: 1})
	if err != nil {
		return fmt.Errorf("directory: %w", err)
	}
	defer st.Close()
	dir, err := c.OpenDirectory(ctx, st)
	if err != nil {
		return err
	}
	return dir.RefreshAll(ctx)
}
