module github.com/buzzrelay/relay/infra

go 1.26.8

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/aws/aws-cdk-go/awscdk/v2 v2.276.0 // indirect
	github.com/aws/constructs-go/constructs/v10 v10.8.1 // indirect
	github.com/aws/jsii-runtime-go v1.142.0 // indirect
	github.com/cdklabs/awscdk-asset-awscli-go/awscliv1/v2 v2.2.292 // indirect
	github.com/cdklabs/awscdk-asset-node-proxy-agent-go/nodeproxyagentv6/v2 v2.1.3 // indirect
	github.com/cdklabs/cloud-assembly-schema-go/awscdkcloudassemblyschema/v55 v55.3.0 // indirect
)
