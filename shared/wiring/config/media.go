package config

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/buzzrelay/relay/shared/domain/blossom"
)

// MediaConfig is MEDIA_* and the S3 endpoint: the Blossom media service.
type MediaConfig struct {
	// Bucket is MEDIA_BUCKET; empty: media is off (its routes answer 404).
	Bucket string
	// Endpoint is AWS_ENDPOINT_URL_S3 (the local S3 server; empty: the
	// region's S3), reached with path-style addressing when set.
	Endpoint string
	// Limits are MEDIA_MAX_BYTES, MEDIA_DIRECT_MAX_BYTES,
	// MEDIA_KEY_BYTES_PER_DAY, MEDIA_COMMUNITY_BYTES_STORED (whole bytes;
	// 0 turns the two quotas off) and MEDIA_PRESIGN_TTL (a Go duration)
	// over blossom.Defaults.
	Limits blossom.Limits
}

// On reports whether media is configured.
func (m MediaConfig) On() bool { return m.Bucket != "" }

func loadMedia(getenv func(string) string) (MediaConfig, error) {
	m := MediaConfig{Bucket: getenv("MEDIA_BUCKET"), Endpoint: getenv("AWS_ENDPOINT_URL_S3"), Limits: blossom.Defaults}
	if e := m.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return m, fmt.Errorf("AWS_ENDPOINT_URL_S3 must be an http(s) URL, got %q", e)
		}
	}
	for _, v := range []struct {
		name     string
		p        *int64
		zeroOK   bool
		min, max int64
	}{
		{"MEDIA_MAX_BYTES", &m.Limits.MaxBytes, false, 1, 5 << 40},
		{"MEDIA_DIRECT_MAX_BYTES", &m.Limits.DirectMaxBytes, false, 1, 10 << 20},
		{"MEDIA_KEY_BYTES_PER_DAY", &m.Limits.KeyBytesPerDay, true, 0, 1 << 50},
		{"MEDIA_COMMUNITY_BYTES_STORED", &m.Limits.CommunityBytesStored, true, 0, 1 << 55},
	} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < v.min || n > v.max || (n == 0 && !v.zeroOK) {
			return m, fmt.Errorf("%s must be a whole number of bytes from %d to %d, got %q", v.name, v.min, v.max, s)
		}
		*v.p = n
	}
	var err error
	if m.Limits.PresignTTL, err = duration(getenv, "MEDIA_PRESIGN_TTL", blossom.Defaults.PresignTTL, time.Minute, 7*24*time.Hour); err != nil {
		return m, err
	}
	return m, nil
}
