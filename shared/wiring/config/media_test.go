package config

import (
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/blossom"
)

func TestMediaConfig(t *testing.T) {
	load := func(env map[string]string) (*Config, error) { return Load(func(k string) string { return env[k] }) }
	c, err := load(nil)
	if err != nil || c.Media.On() || c.Media.Limits != blossom.Defaults {
		t.Fatalf("defaults: %+v %v", c.Media, err)
	}
	c, err = load(map[string]string{"MEDIA_BUCKET": "b", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000",
		"MEDIA_MAX_BYTES": "1000", "MEDIA_DIRECT_MAX_BYTES": "100", "MEDIA_KEY_BYTES_PER_DAY": "0",
		"MEDIA_COMMUNITY_BYTES_STORED": "5000", "MEDIA_PRESIGN_TTL": "5m"})
	if err != nil {
		t.Fatal(err)
	}
	want := blossom.Limits{MaxBytes: 1000, DirectMaxBytes: 100, KeyBytesPerDay: 0, CommunityBytesStored: 5000, PresignTTL: 5 * time.Minute}
	if !c.Media.On() || c.Media.Limits != want || c.Media.Endpoint != "http://127.0.0.1:9000" {
		t.Fatalf("set: %+v", c.Media)
	}
	for _, bad := range []map[string]string{
		{"MEDIA_MAX_BYTES": "0"}, {"MEDIA_MAX_BYTES": "-1"}, {"MEDIA_DIRECT_MAX_BYTES": "lots"},
		{"MEDIA_DIRECT_MAX_BYTES": "20000000"}, {"MEDIA_PRESIGN_TTL": "5"}, {"MEDIA_PRESIGN_TTL": "1s"},
		{"AWS_ENDPOINT_URL_S3": "localhost:9000"},
	} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "media") {
			t.Errorf("%v: %v, want a media error", bad, err)
		}
	}
}
