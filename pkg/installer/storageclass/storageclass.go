package storageclass

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// InitializeAnnotation marks an infra StorageClass for use by tenant
	// clusters when its value is "true".
	InitializeAnnotation = "kubevirt-initialization.k8c.io/initialize-sc"
	// defaultClassAnnotation marks the cluster's default StorageClass.
	defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"
)

// Class is one infra StorageClass as the workflow sees it.
type Class struct {
	Name        string
	Provisioner string
	Default     bool
	Initialized bool
}

// Change is what Set did to one StorageClass.
type Change struct {
	Name string
	// Changed is false when the class already was as asked.
	Changed bool
}

// Set marks (initialize=true) or unmarks the named classes. Every name is
// checked to exist before any class is changed, so a typo changes nothing.
func Set(ctx context.Context, c ctrlruntimeclient.Client, names []string, initialize bool) ([]Change, error) {
	classes := make([]*storagev1.StorageClass, 0, len(names))
	for _, name := range names {
		sc := &storagev1.StorageClass{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, sc); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("StorageClass %q does not exist on the infra cluster", name)
			}
			return nil, fmt.Errorf("failed to get StorageClass %q: %w", name, err)
		}
		classes = append(classes, sc)
	}
	changes := make([]Change, 0, len(classes))
	for _, sc := range classes {
		changed, err := set(ctx, c, sc, initialize)
		if err != nil {
			return changes, err
		}
		changes = append(changes, Change{Name: sc.Name, Changed: changed})
	}
	return changes, nil
}

func set(ctx context.Context, c ctrlruntimeclient.Client, sc *storagev1.StorageClass, initialize bool) (bool, error) {
	_, annotated := sc.Annotations[InitializeAnnotation]
	if (initialize && initialized(sc)) || (!initialize && !annotated) {
		return false, nil
	}
	patch := ctrlruntimeclient.MergeFrom(sc.DeepCopy())
	if initialize {
		if sc.Annotations == nil {
			sc.Annotations = map[string]string{}
		}
		sc.Annotations[InitializeAnnotation] = "true"
	} else {
		delete(sc.Annotations, InitializeAnnotation)
	}
	if err := c.Patch(ctx, sc, patch); err != nil {
		return false, fmt.Errorf("failed to annotate StorageClass %q: %w", sc.Name, err)
	}
	return true, nil
}

// List returns every StorageClass of the infra cluster, sorted by name.
func List(ctx context.Context, c ctrlruntimeclient.Reader) ([]Class, error) {
	list := &storagev1.StorageClassList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("failed to list StorageClasses: %w", err)
	}
	out := make([]Class, 0, len(list.Items))
	for i := range list.Items {
		sc := &list.Items[i]
		out = append(out, Class{
			Name:        sc.Name,
			Provisioner: sc.Provisioner,
			Default:     sc.Annotations[defaultClassAnnotation] == "true",
			Initialized: initialized(sc),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Write prints classes as a table.
func Write(w io.Writer, classes []Class) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROVISIONER\tDEFAULT\tTENANT CLUSTERS")
	for _, c := range classes {
		tenant := "-"
		if c.Initialized {
			tenant = "initialized"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Provisioner, yesNo(c.Default), tenant)
	}
	return tw.Flush()
}

func initialized(sc *storagev1.StorageClass) bool {
	return sc.Annotations[InitializeAnnotation] == "true"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
