package webhook

// The webhook's rights on the user cluster: it reads the Secrets and
// ConfigMaps providerSpecs reference, one by one; with a self-managed
// certificate it keeps its Secret in the release namespace (the placeholder
// namespace "webhook-certificate" becomes a Role there) and writes the CA
// bundle into the two webhook configurations.
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update,namespace=webhook-certificate
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;update
