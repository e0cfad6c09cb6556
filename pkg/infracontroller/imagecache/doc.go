// Package imagecache keeps the image cache of every tenant namespace: it
// imports the named images of ConfigMap image-cache as DataVolumes and
// removes cache DataVolumes that no VirtualMachine has referred to for a
// grace period. The conventions it shares with the provider are in
// pkg/imagecache.
package imagecache
