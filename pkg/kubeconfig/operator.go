package kubeconfig

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
)

// operatorFiles holds the kubeconfigs an operator named on the command line
// of this process (ReadOperatorFile), by the SHA-256 of their content, with
// their relative paths resolved. Trust is a property of the process: its
// operator chose these files, as they chose the binary, so they may do what
// kubectl lets a kubeconfig do. Content that equals one of them is treated
// like it wherever it comes from: whoever can give that content already
// holds what it grants.
var operatorFiles sync.Map // [sha256.Size]byte → *clientcmdapi.Config

// ReadOperatorFile reads a kubeconfig file that the operator of this
// process named in a flag (--infra-kubeconfig, say) and returns its
// content. Parse and Problem then accept that content as kubectl would:
// exec plugins, auth providers and files, with relative paths resolved
// against the file's directory.
func ReadOperatorFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the kubeconfig %s: %w", path, err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load the kubeconfig %s: %w", path, err)
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, fmt.Errorf("failed to resolve the paths of the kubeconfig %s: %w", path, err)
	}
	operatorFiles.Store(sha256.Sum256(data), cfg)
	return data, nil
}

// operatorFile returns the parsed operator kubeconfig whose content is
// data, if data is one.
func operatorFile(data []byte) (*clientcmdapi.Config, bool) {
	v, ok := operatorFiles.Load(sha256.Sum256(data))
	if !ok {
		return nil, false
	}
	return v.(*clientcmdapi.Config).DeepCopy(), true
}

// OperatorConfig returns the client configuration of the kubeconfig file
// the operator named (--kubeconfig), as kubectl reads it; without a path,
// $KUBECONFIG, ~/.kube/config or the in-cluster configuration, as
// controller-runtime finds them. Errors name the file, which the operator
// chose.
func OperatorConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("failed to find a kubeconfig: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("failed to load the kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}
