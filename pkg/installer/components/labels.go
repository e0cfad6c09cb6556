package components

// Labels and the field manager of objects the installer owns outside Helm
// releases (namespaces and CRDs).
const (
	// FieldManager is the server-side apply field manager of the installer.
	FieldManager = "kubevirt-installer"
	// LabelManagedBy marks objects the installer created; uninstall deletes
	// only objects that carry it with value ManagedBy.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is the value of LabelManagedBy.
	ManagedBy = "kubevirt-installer"
	// LabelComponent names the component an object belongs to.
	LabelComponent = "kubevirt-kkp.io/component"
	// ChartAnnotation is the Chart.yaml annotation naming the component a
	// chart belongs to; a release whose chart lacks it is not ours.
	ChartAnnotation = "kubevirt-kkp.io/component"
)

// OwnedLabels are the labels the installer puts on the objects it owns for
// component.
func OwnedLabels(component string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelComponent: component}
}
