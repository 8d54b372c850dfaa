package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func line(t *testing.T, lines []Line, prefix string) float64 {
	t.Helper()
	for _, l := range lines {
		if strings.HasPrefix(l.Item, prefix) {
			return l.USD
		}
	}
	t.Fatalf("no line %q", prefix)
	return 0
}

func TestBill(t *testing.T) {
	idle := Usage{Profile: "community", DBACU: 0.5, StoredGB: 1, SentKB: 1, KeyYear: 3}
	with := func(f func(*Usage)) Usage { u := idle; f(&u); return u }
	for _, c := range []struct {
		name  string
		u     Usage
		total float64
		lines map[string]float64
	}{
		// The goal of issue 8: an idle community relay under $3 a month.
		{"community idle", idle, 1.50, map[string]float64{"egress-only": 0, "Aurora compute": 0, "KMS key": 1.00, "Secrets Manager": 0.40, "Aurora storage": 0.10}},
		// managed: NAT gateway + IPv4, 13 alarms, key with two rotations.
		{"managed idle", with(func(u *Usage) { u.Profile = "managed" }), 41.30,
			map[string]float64{"NAT gateway": 32.85, "NAT public IPv4": 3.65, "CloudWatch alarms": 1.30, "KMS key": 3.00}},
		{"managed first year", with(func(u *Usage) { u.Profile = "managed"; u.KeyYear = 1 }), 39.30, map[string]float64{"KMS key": 1.00}},
		{"managed second year", with(func(u *Usage) { u.Profile = "managed"; u.KeyYear = 2 }), 40.30, map[string]float64{"KMS key": 2.00}},
		{"nat-instance", with(func(u *Usage) { u.Egress = "nat-instance" }), 1.50 + 3.066 + 0.64 + 3.65 + 0.10,
			map[string]float64{"NAT instance t4g.nano": 3.066, "NAT instance recovery alarm": 0.10}},
		// Awake all month at 0.5 ACU.
		{"awake", with(func(u *Usage) { u.DBHours = 730 }), 1.50 + 43.80, map[string]float64{"Aurora compute": 43.80}},
		// A REQ answered with 9 stored events is 10 sent messages: 1M
		// REQs = 1M received + 10M sent.
		{"1M REQs of 9 events", with(func(u *Usage) { u.Messages = 1e6; u.REQs = 1e6; u.EventsPerReq = 9 }), math.NaN(),
			map[string]float64{"WebSocket messages": 11.00, "data transfer out": 0.90, "Lambda requests": 0.20, "Aurora I/O": 1.00}},
		// 1M EVENTs: one OK each, plus 2M live deliveries.
		{"1M events, fanout 2", with(func(u *Usage) { u.Messages = 1e6; u.Fanout = 2e6 }), math.NaN(),
			map[string]float64{"WebSocket messages": 4.00, "Lambda 20000 GB-s": 0.266668}},
		{"1M queries", with(func(u *Usage) { u.Queries = 1e6 }), math.NaN(),
			map[string]float64{"HTTP API requests": 1.00, "Lambda 25000 GB-s": 0.333335, "CloudWatch Logs": 0.15, "Aurora I/O": 0.40}},
		{"connection minutes", with(func(u *Usage) { u.ConnMinutes = 43800 }), 1.50 + 0.01095, map[string]float64{"WebSocket connection minutes": 0.01095}},
		{"stored GB", with(func(u *Usage) { u.StoredGB = 20 }), 3.40, nil},
		// Issue 30: media costs nothing idle; the idle bill stays $1.50.
		{"media idle", with(func(u *Usage) { u.MediaMB = 2 }), 1.50,
			map[string]float64{"S3 media storage": 0, "S3 PUT/COPY requests": 0, "S3 GET requests": 0, "S3 media transfer out": 0}},
		// 100 GB stored all month: $2.30, nothing else.
		{"media stored", with(func(u *Usage) { u.MediaGB = 100 }), 1.50 + 2.30, map[string]float64{"S3 media storage 100.0 GB-month": 2.30}},
		// 10,000 uploads of 2 MB: 20,000 PUT/COPY ($0.10), 10,000 verifying
		// GETs ($0.004), 20,000 HTTP requests and function runs, 20 GB
		// hashed (200 s) on top of 0.05 s per request: (1000 + 200) s x
		// 0.5 GB = 600 GB-s; no transfer out.
		{"media uploads", with(func(u *Usage) { u.MediaUploads = 1e4; u.MediaMB = 2 }), math.NaN(),
			map[string]float64{"S3 PUT/COPY requests": 0.10, "S3 GET requests": 0.004, "S3 media transfer out": 0,
				"HTTP API requests": 0.02, "Lambda requests": 0.004, "Lambda 600 GB-s": 600 * 0.0000133334}},
		// 1M downloads of 1 MB: 1M presigned GETs ($0.40) and 1,000 GB out
		// of S3 ($90), 1M redirects (HTTP API and Lambda).
		{"media downloads", with(func(u *Usage) { u.MediaDownloads = 1e6; u.MediaMB = 1 }), math.NaN(),
			map[string]float64{"S3 GET requests": 0.40, "S3 media transfer out 1000.00 GB": 90.00, "S3 PUT/COPY requests": 0,
				"HTTP API requests": 1.00, "Lambda requests": 0.20, "data transfer out": 0}},
		// Behind a NAT gateway every uploaded byte is processed once (the
		// function reads it); downloads bypass the functions.
		{"media behind NAT", with(func(u *Usage) { u.Egress = "nat-gateway"; u.MediaUploads = 1e3; u.MediaDownloads = 1e5; u.MediaMB = 10 }), math.NaN(),
			map[string]float64{"NAT processing 10.00 GB": 0.45}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines, err := Bill(c.u)
			if err != nil {
				t.Fatal(err)
			}
			for prefix, want := range c.lines {
				if got := line(t, lines, prefix); math.Abs(got-want) > 1e-6 {
					t.Errorf("%s = %.6f, want %.6f", prefix, got, want)
				}
			}
			if !math.IsNaN(c.total) && math.Abs(Total(lines)-c.total) > 1e-6 {
				t.Errorf("total %.4f, want %.4f", Total(lines), c.total)
			}
		})
	}
	if _, err := Bill(Usage{Profile: "enterprise"}); err == nil {
		t.Error("unknown profile accepted")
	}
	if _, err := Bill(with(func(u *Usage) { u.Egress = "vpn" })); err == nil {
		t.Error("unknown egress accepted")
	}
}

func TestPrintEndsWithTotal(t *testing.T) {
	u := Usage{Profile: "community", DBACU: 0.5, StoredGB: 1, SentKB: 1, KeyYear: 3}
	lines, _ := Bill(u)
	var b strings.Builder
	Print(&b, u, lines)
	out := strings.Split(strings.TrimSpace(b.String()), "\n")
	if last := out[len(out)-1]; last != fmt.Sprintf("total: $%.2f/month", 1.50) || Total(lines) >= 3 {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(out[0], PricesDate) || !strings.Contains(out[0], "S3 "+S3PricesDate) {
		t.Errorf("first line %q does not date the prices", out[0])
	}
	if len(out) != len(lines)+2 {
		t.Errorf("%d lines for %d items", len(out), len(lines))
	}
}
