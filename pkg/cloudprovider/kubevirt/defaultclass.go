package kubevirt

import (
	"context"
	"fmt"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Annotations that make a StorageClass the cluster's default.
const (
	annotationDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	annotationBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// defaultStorageClasses gives disks without storageClassName the infra
// cluster's default StorageClass. It completes the settings in place, so
// the DataVolumes, the image cache and the StorageProfile lookups all name
// the class that was the default when the VM was created. Without a default class each
// such disk is a problem naming its field.
func (in *inspector) defaultStorageClasses(ctx context.Context) error {
	s := in.settings
	tmpl := specPath.Child("virtualMachine", "template")
	disks := []struct {
		name *string
		path *field.Path
	}{{&s.PrimaryDisk.StorageClassName, tmpl.Child("primaryDisk", "storageClassName")}}
	for i := range s.SecondaryDisks {
		disks = append(disks, struct {
			name *string
			path *field.Path
		}{&s.SecondaryDisks[i].StorageClassName, tmpl.Child("secondaryDisks").Index(i).Child("storageClassName")})
	}
	var class string
	looked := false
	for _, d := range disks {
		if *d.name != "" {
			continue
		}
		if !looked {
			var err error
			if class, err = in.defaultStorageClass(ctx); err != nil {
				return err
			}
			looked = true
		}
		if class == "" {
			in.addf(d.path, "no StorageClass of the infra cluster is the default (annotation %s: \"true\"); name one", annotationDefaultClass)
			continue
		}
		*d.name = class
	}
	return nil
}

// defaultStorageClass returns the name of the infra cluster's default
// StorageClass, "" when there is none. With several, the newest wins, as
// the API server's defaulting picks it.
func (in *inspector) defaultStorageClass(ctx context.Context) (string, error) {
	var list storagev1.StorageClassList
	if err := in.reader.List(ctx, &list); err != nil {
		return "", fmt.Errorf("failed to list StorageClasses: %w", err)
	}
	var best *storagev1.StorageClass
	for i := range list.Items {
		sc := &list.Items[i]
		if !isDefaultClass(sc) {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name) {
			best = sc
		}
	}
	if best == nil {
		return "", nil
	}
	return best.Name, nil
}

// isDefaultClass reports whether a StorageClass carries a default-class
// annotation set to true.
func isDefaultClass(sc *storagev1.StorageClass) bool {
	for _, key := range []string{annotationDefaultClass, annotationBetaDefaultClass} {
		if strings.EqualFold(sc.Annotations[key], "true") {
			return true
		}
	}
	return false
}
