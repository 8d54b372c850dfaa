package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"
)

// cdk-nag's AWS Solutions pack finds nothing unsuppressed in either
// profile's template (nag.go lists each suppression with its reason).
func TestNagFindsNothingUnsuppressed(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  map[string]any
	}{{"community", nil}, {"managed", map[string]any{"profile": "managed"}}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := cdkContext(t, c.ctx)
			ctx["assetDir"] = assetDir(t)
			_, stack, _ := newStack(t, ctx, "")
			a := assertions.Annotations_FromStack(stack)
			for _, level := range []struct {
				name  string
				found *[]*cxapi.SynthesisMessage
			}{
				{"error", a.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))},
				{"warning", a.FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))},
			} {
				for _, m := range *level.found {
					t.Errorf("cdk-nag %s at %s: %v", level.name, *m.Id, m.Entry.Data)
				}
			}
		})
	}
}
