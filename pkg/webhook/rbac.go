package webhook

// The webhook's rights on the user cluster: it reads the Secrets and
// ConfigMaps providerSpecs reference, one by one; with a self-managed
// certificate it creates its Secret in the release namespace (the
// placeholder namespace "webhook-certificate" becomes a Role there) and
// updates it, and writes the CA bundle into the two webhook configurations.
// The names are the chart's.
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create,namespace=webhook-certificate
// +kubebuilder:rbac:groups="",resources=secrets,verbs=update,resourceNames=machine-controller-webhook-tls,namespace=webhook-certificate
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;update,resourceNames=machine-controller-webhook
