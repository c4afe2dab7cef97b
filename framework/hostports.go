package framework

import (
	v1 "k8s.io/api/core/v1"
)

// wildcardIP is the host IP that binds every address.
const wildcardIP = "0.0.0.0"

// HostPort is one host port a pod binds.
type HostPort struct {
	IP       string
	Protocol v1.Protocol
	Port     int32
}

// PodHostPorts returns the host ports of the pod's containers and of its
// restartable init containers (which keep running). An empty hostIP means
// 0.0.0.0 and an empty protocol means TCP, as the kubelet reads them.
func PodHostPorts(pod *v1.Pod) []HostPort {
	var out []HostPort
	add := func(c *v1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := HostPort{IP: p.HostIP, Protocol: p.Protocol, Port: p.HostPort}
			if hp.IP == "" {
				hp.IP = wildcardIP
			}
			if hp.Protocol == "" {
				hp.Protocol = v1.ProtocolTCP
			}
			out = append(out, hp)
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}

type protocolPort struct {
	protocol v1.Protocol
	port     int32
}

// HostPortInfo counts the host ports in use on a node, per IP.
type HostPortInfo map[string]map[protocolPort]int

// Add records one use of hp.
func (h *HostPortInfo) Add(hp HostPort) {
	if *h == nil {
		*h = make(HostPortInfo)
	}
	m := (*h)[hp.IP]
	if m == nil {
		m = make(map[protocolPort]int)
		(*h)[hp.IP] = m
	}
	m[protocolPort{hp.Protocol, hp.Port}]++
}

// Remove forgets one use of hp.
func (h *HostPortInfo) Remove(hp HostPort) {
	m := (*h)[hp.IP]
	if m == nil {
		return
	}
	k := protocolPort{hp.Protocol, hp.Port}
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
	if len(m) == 0 {
		delete(*h, hp.IP)
	}
}

// Conflicts reports whether binding hp would clash with a port in use: the
// same protocol and port on the same IP, or on any IP when either side is
// the wildcard 0.0.0.0.
func (h HostPortInfo) Conflicts(hp HostPort) bool {
	k := protocolPort{hp.Protocol, hp.Port}
	if hp.IP == wildcardIP {
		for _, m := range h {
			if m[k] > 0 {
				return true
			}
		}
		return false
	}
	return h[hp.IP][k] > 0 || h[wildcardIP][k] > 0
}

// Clone returns a deep copy.
func (h HostPortInfo) Clone() HostPortInfo {
	if len(h) == 0 {
		return nil
	}
	c := make(HostPortInfo, len(h))
	for ip, m := range h {
		cm := make(map[protocolPort]int, len(m))
		for k, v := range m {
			cm[k] = v
		}
		c[ip] = cm
	}
	return c
}
