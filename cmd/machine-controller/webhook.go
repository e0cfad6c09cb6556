package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
)

// webhookFlags are the flags of the webhook sub-command.
type webhookFlags struct {
	processFlags
	infraBudget                        time.Duration
	host                               string
	port                               int
	certFile, keyFile                  string
	namespace, secretName, serviceName string
	mutatingConfig, validatingConfig   string
	maxInFlight                        int
}

func newWebhookCmd(errOut io.Writer) *cobra.Command {
	var f webhookFlags
	cmd := &cobra.Command{
		Use:   "webhook [flags]",
		Short: "Serve the admission webhook for Machines, MachineSets and MachineDeployments",
		Long: `webhook serves mutating and validating admission for the cluster.k8s.io/v1alpha1 Machines, MachineSets and
MachineDeployments of the user cluster: providerSpecs get the provider's defaults and are validated (what
they reference on the infra cluster only when it answers within --infra-budget), MachineDeployment and
MachineSet specs are checked, and a Machine's spec is immutable unless the update carries the annotation
kubermatic.io/bypass-no-spec-mutation-requirement: "true". The serving certificate comes from
--tls-cert-file/--tls-key-file, else it is generated, kept in the Secret --certificate-secret and injected
into the webhook configurations. Every replica serves; there is no leader election.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(errOut)
			if err != nil {
				return err
			}
			return opts.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	f.bind(fl, "infra namespace of specs that name none (default: the infra kubeconfig's)",
		"admit only objects whose label machine.k8s.io/controller has this value (\"\": objects without the label), as run --name")
	fl.DurationVar(&f.infraBudget, "infra-budget", webhook.DefaultInfraBudget, "how long a request waits for the infra cluster before it is decided on the spec's syntax alone")
	fl.StringVar(&f.host, "host", "", "address the webhooks listen on (default: all)")
	fl.IntVar(&f.port, "port", 9443, "port the webhooks listen on")
	fl.StringVar(&f.certFile, "tls-cert-file", "", "serving certificate (e.g. mounted from cert-manager's Secret), reloaded on change")
	fl.StringVar(&f.keyFile, "tls-key-file", "", "key of --tls-cert-file")
	fl.StringVar(&f.namespace, "namespace", "kube-system", "namespace of the webhook's Service and of the self-managed certificate's Secret")
	fl.StringVar(&f.secretName, "certificate-secret", "machine-controller-webhook-tls", "Secret of the self-managed certificate (without --tls-cert-file)")
	fl.StringVar(&f.serviceName, "service-name", "machine-controller-webhook", "Service the self-managed certificate is issued for")
	fl.StringVar(&f.mutatingConfig, "mutating-webhook-configuration", "machine-controller-webhook", "MutatingWebhookConfiguration the self-managed CA is injected into (\"\": none)")
	fl.IntVar(&f.maxInFlight, "max-in-flight", webhook.DefaultMaxInFlight,
		fmt.Sprintf("admissions served at once (1 to %d); a review that finds none free within %s is answered with 429", webhook.MaxMaxInFlight, webhook.AdmissionWait))
	fl.StringVar(&f.validatingConfig, "validating-webhook-configuration", "machine-controller-webhook", "ValidatingWebhookConfiguration the self-managed CA is injected into (\"\": none)")
	return cmd
}

// options turns the flags into webhook.Options.
func (f *webhookFlags) options(errOut io.Writer) (webhook.Options, error) {
	if err := webhook.CheckMaxInFlight(f.maxInFlight); err != nil {
		return webhook.Options{}, fmt.Errorf("--max-in-flight: %w", err)
	}
	cfg, infraKubeconfig, err := f.clusters()
	if err != nil {
		return webhook.Options{}, err
	}
	opts := webhook.Options{
		UserConfig:      cfg,
		InfraKubeconfig: infraKubeconfig,
		InfraNamespace:  f.infraNamespace,
		Name:            f.name,
		InfraBudget:     f.infraBudget,
		MaxInFlight:     f.maxInFlight,
		Host:            f.host,
		Port:            f.port,
		CertFile:        f.certFile,
		KeyFile:         f.keyFile,
		MetricsAddress:  f.metricsAddress,
		HealthAddress:   f.healthAddress,
		Log:             f.logger(errOut),
		Getenv:          os.Getenv,
	}
	if f.certFile == "" && f.keyFile == "" {
		opts.SelfManaged = &webhook.SelfManagedTLS{
			Namespace: f.namespace, SecretName: f.secretName, ServiceName: f.serviceName,
			MutatingWebhookConfiguration: f.mutatingConfig, ValidatingWebhookConfiguration: f.validatingConfig,
		}
	}
	return opts, nil
}
