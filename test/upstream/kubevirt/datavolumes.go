package main

import (
	"encoding/json"
	"fmt"
	"net/http"

	v1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubecli"

	"kubevirt.io/kubevirt/pkg/virt-controller/watch/util"
)

// dataVolumesPath is where the webhook server also answers which
// DataVolumes virt-controller would create for a VirtualMachine.
const dataVolumesPath = "/datavolumes"

// serveDataVolumes answers a POSTed VirtualMachine (JSON) with the
// DataVolumes virt-controller creates from its dataVolumeTemplates, made by
// virt-controller's own function: template metadata and spec, the claim
// adoption annotation, the VM's priority class, clone sources resolved
// (a DataSource reference replaced by its source, a PVC source without a
// namespace given the VM's), the created-by label, the owner reference and
// the VM's namespace.
// The answer is a JSON array; a template KubeVirt cannot resolve is a 422
// with KubeVirt's message.
func serveDataVolumes(cli kubecli.KubevirtClient) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a VirtualMachine", http.StatusMethodNotAllowed)
			return
		}
		vm := &v1.VirtualMachine{}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(vm); err != nil {
			http.Error(w, fmt.Sprintf("failed to decode the VirtualMachine: %v", err), http.StatusBadRequest)
			return
		}
		dvs := make([]any, 0, len(vm.Spec.DataVolumeTemplates))
		for _, tmpl := range vm.Spec.DataVolumeTemplates {
			dv, err := util.CreateDataVolumeManifest(cli, tmpl, vm)
			if err != nil {
				http.Error(w, fmt.Sprintf("dataVolumeTemplate %s: %v", tmpl.Name, err), http.StatusUnprocessableEntity)
				return
			}
			// virt-controller creates it through the client of the VM's
			// namespace.
			dv.Namespace = vm.Namespace
			dv.APIVersion, dv.Kind = "cdi.kubevirt.io/v1beta1", "DataVolume"
			dvs = append(dvs, dv)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(dvs)
	}
}
