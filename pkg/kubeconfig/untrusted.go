package kubeconfig

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// MaxSize bounds the kubeconfigs Parse and Problem read: a Secret holds at
// most 1 MiB, and a real kubeconfig a few kilobytes.
const MaxSize = 1 << 20

// refusal returns why a kubeconfig that came from a user (a providerSpec, a
// Secret, the environment) may not be used, or "" when it holds inline data
// only. Such a kubeconfig is read by a process that runs on the seed with
// its own credentials and files: an exec plugin or auth provider would run a
// program there, and any path (a token file, certificate, key or CA file)
// would send or use a file of the process, such as its ServiceAccount
// token. Every user and cluster of the kubeconfig is checked, not only
// those of its current context, so the rule does not depend on which
// context is read. The message names the field and never its value.
func refusal(cfg *clientcmdapi.Config) string {
	for _, name := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		if p := userRefusal(cfg.AuthInfos[name]); p != "" {
			return fmt.Sprintf("users[%s].user.%s", quoteName(name), p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Clusters)) {
		if p := clusterRefusal(cfg.Clusters[name]); p != "" {
			return fmt.Sprintf("clusters[%s].cluster.%s", quoteName(name), p)
		}
	}
	return ""
}

// inlineOnly says what a kubeconfig from a user may hold instead.
const inlineOnly = "a kubeconfig given by a user may only hold inline credentials (token, client-certificate-data, client-key-data, certificate-authority-data)"

// userRefusal returns the field of a user entry that is refused and why.
func userRefusal(u *clientcmdapi.AuthInfo) string {
	switch {
	case u == nil:
		return ""
	case u.Exec != nil:
		return "exec: exec plugins are not run for a kubeconfig given by a user; " + inlineOnly
	case u.AuthProvider != nil:
		return "auth-provider: auth provider plugins are not run for a kubeconfig given by a user; " + inlineOnly
	case u.TokenFile != "":
		return "tokenFile: files are not read for a kubeconfig given by a user; use token instead (" + inlineOnly + ")"
	case u.ClientCertificate != "":
		return "client-certificate: files are not read for a kubeconfig given by a user; use client-certificate-data instead"
	case u.ClientKey != "":
		return "client-key: files are not read for a kubeconfig given by a user; use client-key-data instead"
	}
	return ""
}

// clusterRefusal returns the field of a cluster entry that is refused and
// why.
func clusterRefusal(c *clientcmdapi.Cluster) string {
	if c == nil {
		return ""
	}
	if c.CertificateAuthority != "" {
		return "certificate-authority: files are not read for a kubeconfig given by a user; use certificate-authority-data instead"
	}
	if c.Server != "" {
		if p := urlRefusal(c.Server); p != "" {
			return "server: " + p
		}
		u, _ := url.Parse(c.Server)
		if u.User != nil {
			return "server: must not contain credentials (user:password@); give them as token or username and password of the user"
		}
	}
	if c.ProxyURL != "" {
		if p := urlRefusal(c.ProxyURL); p != "" {
			return "proxy-url: " + p
		}
	}
	return ""
}

// urlRefusal returns why s is not an http or https URL with a host.
func urlRefusal(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "must be a URL"
	case u.Scheme != "https" && u.Scheme != "http":
		return "the scheme must be https or http"
	case u.Host == "":
		return "must name a host"
	}
	return ""
}

// fromFiles reports whether a client configuration would run a program or
// read a file. refusal keeps every such field out of a user's kubeconfig;
// this checks the result, so that a field client-go may add later is not
// used unseen.
func fromFiles(cfg *rest.Config) bool {
	return cfg.ExecProvider != nil || cfg.AuthProvider != nil || cfg.BearerTokenFile != "" ||
		cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != ""
}

// quoteName quotes the name of an entry for a message, cut to 64
// characters: names are not credentials, but a user chose them.
func quoteName(name string) string {
	const most = 64
	if len(name) > most {
		name = strings.ToValidUTF8(name[:most], "") + "…"
	}
	return strconv.Quote(name)
}

// Server returns a server URL as messages may print it: without user
// information, query or fragment, which may hold credentials. A kubeconfig
// from a user has none (it is refused with credentials in its server URL);
// an operator's file may.
func Server(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return "(a server URL that does not parse)"
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	return u.String()
}
