package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// newNetwork is the VPC and the functions' security group for s.Egress.
//
// The subnet layout is the same for every egress: public /24s (a NAT
// lives there when there is one), app /22s (the functions), db /24s
// (Aurora, isolated). egress=ipv6 makes the VPC dual-stack: CDK adds an
// egress-only internet gateway and a ::/0 route to it in the app subnets'
// route tables, and no NAT; DynamoDB (the session table) is reached over
// IPv4 through a gateway VPC endpoint (no charge) on those route tables.
// The functions only speak HTTPS outwards, over IPv6 (ipv6) or IPv4
// through the NAT.
func newNetwork(stack awscdk.Stack, s Settings) (awsec2.Vpc, awsec2.SecurityGroup) {
	props := &awsec2.VpcProps{
		MaxAzs: jsii.Number(2),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24)},
			{Name: jsii.String("app"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(22)},
			{Name: jsii.String("db"), SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED, CidrMask: jsii.Number(24)},
		},
	}
	var natInstance awsec2.NatInstanceProviderV2
	switch s.Egress {
	case "ipv6":
		props.IpProtocol = awsec2.IpProtocol_DUAL_STACK
		props.NatGateways = jsii.Number(0)
	case "nat-instance":
		natInstance = awsec2.NatProvider_InstanceV2(&awsec2.NatInstanceProps{
			InstanceType: awsec2.InstanceType_Of(awsec2.InstanceClass_T4G, awsec2.InstanceSize_NANO),
			MachineImage: awsec2.MachineImage_LatestAmazonLinux2023(&awsec2.AmazonLinux2023ImageSsmParameterProps{
				CpuType: awsec2.AmazonLinuxCpuType_ARM_64,
			}),
			// Inbound is opened below to the VPC's own range only.
			DefaultAllowedTraffic: awsec2.NatTrafficDirection_OUTBOUND_ONLY,
		})
		props.NatGateways = jsii.Number(1)
		props.NatGatewayProvider = natInstance
	default: // nat-gateway
		props.NatGateways = jsii.Number(1)
		props.NatGatewayProvider = awsec2.NatProvider_Gateway(nil)
	}
	vpc := awsec2.NewVpc(stack, jsii.String("Vpc"), props)
	if natInstance != nil {
		hardenNATInstance(stack, vpc, natInstance)
	}

	fnSG := awsec2.NewSecurityGroup(stack, jsii.String("FunctionsSg"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("buzz relay functions"),
		AllowAllOutbound: jsii.Bool(false),
	})
	if s.Egress == "ipv6" {
		fnSG.AddEgressRule(awsec2.Peer_AnyIpv6(), awsec2.Port_Tcp(jsii.Number(443)), jsii.String("HTTPS to AWS APIs over IPv6 (egress-only internet gateway)"), nil)
		// The session table (DynamoDB) through a gateway endpoint: its
		// prefix list is the app subnets' only IPv4 route out, so HTTPS
		// over IPv4 reaches DynamoDB and nothing else outside the VPC.
		fnSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)), jsii.String("HTTPS to DynamoDB (the session table) through its gateway endpoint, the only IPv4 route out"), nil)
		vpc.AddGatewayEndpoint(jsii.String("DynamoDbEndpoint"), &awsec2.GatewayVpcEndpointOptions{
			Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB(),
			Subnets: &[]*awsec2.SubnetSelection{{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}},
		})
	} else {
		fnSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)), jsii.String("HTTPS to AWS APIs through the NAT"), nil)
	}

	if s.KMSEndpoint {
		epSG := awsec2.NewSecurityGroup(stack, jsii.String("KmsEndpointSg"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("KMS interface endpoint"), AllowAllOutbound: jsii.Bool(false),
		})
		epSG.AddIngressRule(fnSG, awsec2.Port_Tcp(jsii.Number(443)), jsii.String("functions to KMS"), nil)
		// The endpoint's addresses are IPv4 in the VPC: allow them too.
		fnSG.AddEgressRule(epSG, awsec2.Port_Tcp(jsii.Number(443)), jsii.String("KMS interface endpoint"), nil)
		awsec2.NewInterfaceVpcEndpoint(stack, jsii.String("KmsEndpoint"), &awsec2.InterfaceVpcEndpointProps{
			Vpc:               vpc,
			Service:           awsec2.InterfaceVpcEndpointAwsService_KMS(),
			Subnets:           &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
			PrivateDnsEnabled: jsii.Bool(true),
			SecurityGroups:    &[]awsec2.ISecurityGroup{epSG},
			Open:              jsii.Bool(false),
		})
	}
	return vpc, fnSG
}

// hardenNATInstance limits the NAT instance to forwarding the VPC's own
// traffic, requires IMDSv2, lets Systems Manager patch it (no SSH key, no
// open port) and recovers it onto healthy hardware when the system status
// check fails.
func hardenNATInstance(stack awscdk.Stack, vpc awsec2.Vpc, nat awsec2.NatInstanceProviderV2) {
	nat.SecurityGroup().AddIngressRule(awsec2.Peer_Ipv4(vpc.VpcCidrBlock()), awsec2.Port_AllTraffic(),
		jsii.String("forward traffic from inside the VPC only"), nil)
	awscdk.Aspects_Of(vpc).Add(awsec2.NewInstanceRequireImdsv2Aspect(&awsec2.InstanceRequireImdsv2AspectProps{
		SuppressWarnings: jsii.Bool(true),
	}), nil)
	for i, inst := range *nat.GatewayInstances() {
		inst.Role().AddManagedPolicy(awsiam.ManagedPolicy_FromAwsManagedPolicyName(jsii.String("AmazonSSMManagedInstanceCore")))
		recover := awscloudwatch.NewAlarm(stack, jsii.String(fmt.Sprintf("nat-instance-%d-recover", i+1)), &awscloudwatch.AlarmProps{
			AlarmDescription: jsii.String("buzz relay NAT instance: system status check failed, recover it"),
			Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace:     jsii.String("AWS/EC2"),
				MetricName:    jsii.String("StatusCheckFailed_System"),
				DimensionsMap: &map[string]*string{"InstanceId": inst.InstanceId()},
				Statistic:     jsii.String("Maximum"),
				Period:        awscdk.Duration_Minutes(jsii.Number(1)),
			}),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(2),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_MISSING,
		})
		recover.AddAlarmAction(awscloudwatchactions.NewEc2Action(awscloudwatchactions.Ec2InstanceAction_RECOVER))
	}
}
